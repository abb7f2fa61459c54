package crs

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	coreruleset "github.com/corazawaf/coraza-coreruleset/v4"
	"golang.org/x/mod/sumdb/dirhash"
)

// Release is one CRS release's files as the coraza-coreruleset module lays
// them out: FS holds @owasp_crs/ (the rule files and their data files) and
// @crs-setup.conf.example.
type Release struct {
	Version   string // CRS release, e.g. "4.22.0"
	Source    string // Go module and version the files come from
	RuleFiles int    // how many rule .conf files the release ships
	FS        fs.FS
}

// Embedded is the release compiled into this program (CRS 4.25.0).
func Embedded() *Release {
	return &Release{Version: version, Source: source, RuleFiles: WantRuleFiles, FS: coreruleset.FS}
}

// moduleRelease is a CRS release read from the coraza-coreruleset module's
// zip in the Go module cache. Go links one version of a module per
// program, so any release but the embedded one is read from its zip, which
// `go mod download` fetches and whose hash is checked against Sum (the
// go.sum hash, the same the Go checksum database serves).
type moduleRelease struct {
	Version   string
	Sum       string // h1: hash of the module zip
	RuleFiles int
}

// moduleReleases are the releases the Go module proxy serves besides the
// embedded one.
var moduleReleases = map[string]moduleRelease{
	"4.22.0": {Version: "4.22.0", Sum: "h1:rQhJ1+2+TZsoVBXlRWn+AVteECot3pIF8tSVDjjhkUc=", RuleFiles: 26},
}

// Releases lists the CRS releases LoadRelease accepts, the embedded one last.
func Releases() []string { return []string{"4.22.0", version} }

// LoadRelease returns CRS release v ("4.22.0" or "4.25.0"). A release
// other than the embedded one is read from its module zip, downloaded with
// `go mod download` if the module cache lacks it, and refused unless the
// zip's hash is the pinned one.
func LoadRelease(v string) (*Release, error) {
	if v == version {
		return Embedded(), nil
	}
	mr, ok := moduleReleases[v]
	if !ok {
		return nil, fmt.Errorf("crs release %q: want one of %s", v, strings.Join(Releases(), ", "))
	}
	zipPath, err := moduleZip(mr.Version)
	if err != nil {
		return nil, err
	}
	sum, err := dirhash.HashZip(zipPath, dirhash.Hash1)
	if err != nil {
		return nil, fmt.Errorf("crs release %s: hash %s: %w", v, zipPath, err)
	}
	if sum != mr.Sum {
		return nil, fmt.Errorf("crs release %s: %s has hash %s, want %s", v, zipPath, sum, mr.Sum)
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, fmt.Errorf("crs release %s: %w", v, err)
	}
	// The reader stays open for the program's life: a release is loaded
	// once per run and its files are read while exporting.
	sub, err := fs.Sub(zr, sourceModule+"@v"+mr.Version+"/rules")
	if err != nil {
		return nil, fmt.Errorf("crs release %s: %w", v, err)
	}
	return &Release{Version: mr.Version, Source: sourceModule + "@v" + mr.Version, RuleFiles: mr.RuleFiles, FS: sub}, nil
}

// moduleZip finds (or downloads, with the go command) the module zip of
// coraza-coreruleset at version v.
func moduleZip(v string) (string, error) {
	if cache, err := goEnv("GOMODCACHE"); err == nil && cache != "" {
		p := filepath.Join(cache, "cache", "download", sourceModule, "@v", "v"+v+".zip")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	out, err := exec.Command("go", "mod", "download", "-json", sourceModule+"@v"+v).Output()
	if err != nil {
		return "", fmt.Errorf("crs release %s: `go mod download %s@v%s` failed (%v): run scripts/setup.sh or install Go", v, sourceModule, v, err)
	}
	var d struct{ Zip, Error string }
	if err := json.Unmarshal(out, &d); err != nil {
		return "", fmt.Errorf("crs release %s: go mod download: %w", v, err)
	}
	if d.Error != "" || d.Zip == "" {
		return "", fmt.Errorf("crs release %s: go mod download: %s", v, d.Error)
	}
	return d.Zip, nil
}

// goEnv is one variable of `go env`.
func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	return strings.TrimSpace(string(out)), err
}
