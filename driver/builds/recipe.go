package builds

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"wafbench/driver/internal/host"
)

// moduleSources are the repository files, per engine, whose contents a build
// depends on besides its recipe: the module's own sources (tests excluded),
// the ABI header, the Makefile and the engine's build script. Patterns ending
// in "/..." match every file below the directory.
var moduleSources = map[string][]string{
	ModSecurity: {
		"filters/modsecurity/*.cc", "filters/modsecurity/*.h", "filters/modsecurity/exports.map",
		"filters/modsecurity/Makefile", "filters/abi/*.h", "scripts/engines/modsecurity.sh",
	},
	Coraza: {
		"filters/coraza/...", "internal/crs/...", "internal/rulefiles/...", "filters/abi/*.h", "scripts/engines/coraza.sh",
	},
}

// isSource reports whether a file found under a "/..." pattern is a build
// input: Go, C and header files and Makefiles, not tests or test data.
func isSource(rel string) bool {
	if strings.Contains(rel, "/testdata/") || strings.HasSuffix(rel, "_test.go") || strings.HasSuffix(rel, "_test.cc") {
		return false
	}
	switch filepath.Ext(rel) {
	case ".go", ".c", ".h", ".cc", ".s", ".map", ".conf":
		return true
	}
	return filepath.Base(rel) == "Makefile"
}

// sourceFiles lists the repository files (relative to root, sorted) that the
// build's module is compiled from, including its Go module files.
func (b *Build) sourceFiles(root string) ([]string, error) {
	set := map[string]bool{}
	for _, pat := range moduleSources[b.Engine] {
		if dir, ok := strings.CutSuffix(pat, "/..."); ok {
			err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(root, p)
				rel = filepath.ToSlash(rel)
				if isSource(rel) {
					set[rel] = true
				}
				return nil
			})
			if err != nil && !os.IsNotExist(err) {
				return nil, err
			}
			continue
		}
		matches, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			rel, _ := filepath.Rel(root, m)
			rel = filepath.ToSlash(rel)
			if !strings.HasSuffix(rel, "_test.cc") {
				set[rel] = true
			}
		}
	}
	if b.Source.Kind == sourceGoModule {
		mod := b.modfile()
		set[mod] = true
		set[strings.TrimSuffix(mod, ".mod")+".sum"] = true
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}

// modfile is the go.mod a go-module build compiles with, relative to the
// repository root; empty for other sources.
func (b *Build) modfile() string {
	switch {
	case b.Source.Kind != sourceGoModule:
		return ""
	case b.Source.Modfile != "":
		return b.Source.Modfile
	default:
		return "go.mod"
	}
}

// recipeHash covers everything a build's result depends on: the recipe
// fields (which include the source archive's SHA-256), the toolchain's
// version line, the module's source files and Go module files, and the
// SHA-256 of the profile a pgo build consumes. An unchanged hash with an
// intact module means the build is up to date.
func recipeHash(root string, b *Build, toolchain, profileSHA string) (string, error) {
	h := sha256.New()
	recipe, err := json.Marshal(b)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "recipe %s\ntoolchain %s\nprofile %s\n", recipe, toolchain, profileSHA)
	files, err := b.sourceFiles(root)
	if err != nil {
		return "", err
	}
	for _, f := range files {
		sum, err := host.FileSHA256(filepath.Join(root, f))
		if err != nil {
			return "", fmt.Errorf("build %s: source file %v", b.Mode(), err)
		}
		fmt.Fprintf(h, "file %s %s\n", f, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
