// Package wafconfig is the configuration axis of a run: which rule set and
// settings every WAF mode loads. A configuration is a built-in one — pl1…pl4
// (CRS 4.25.0 at that paranoia level) or crs4.22.0 (CRS 4.22.0 at paranoia
// level 1) — or a directory of the user's own (--waf-config DIR: a main.conf
// and the files it includes), named after the directory's last element.
//
// Built-in configurations keep CRS's defaults for everything else: the
// detection paranoia level equals the blocking one (CRS's
// REQUEST-901-INITIALIZATION sets it so when crs-setup.conf leaves it
// unset), the inbound anomaly score threshold is 5 and the outbound one 4.
// Each is exported to build/crs-<name>/ with wafbench's common engine
// configuration (internal/crs), so only the paranoia level or the release
// differs between two built-in configurations.
package wafconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"wafbench/internal/crs"
)

// Kinds of configuration.
const (
	KindParanoia = "paranoia" // CRS 4.25.0 at a paranoia level
	KindRelease  = "release"  // another CRS release, paranoia level 1
	KindDir      = "dir"      // the user's own main.conf
)

// CRS defaults the built-in configurations keep (crs-setup.conf.example,
// REQUEST-901-INITIALIZATION).
const (
	InboundAnomalyThreshold  = 5
	OutboundAnomalyThreshold = 4
)

// Config is one configuration of the axis.
type Config struct {
	Name          string `json:"name"`
	Kind          string `json:"kind"`
	ParanoiaLevel int    `json:"paranoia_level,omitempty"` // built-in: blocking = detection level
	CRSVersion    string `json:"crs_version,omitempty"`    // built-in
	// SourceDir is --waf-config's directory (KindDir only).
	SourceDir string `json:"source_dir,omitempty"`
}

// Builtin lists the built-in configuration names.
func Builtin() []string { return []string{"pl1", "pl2", "pl3", "pl4", "crs4.22.0"} }

// builtin returns the built-in configuration called name.
func builtin(name string) (Config, bool) {
	switch name {
	case "pl1", "pl2", "pl3", "pl4":
		return Config{Name: name, Kind: KindParanoia, ParanoiaLevel: int(name[2] - '0'), CRSVersion: crs.Releases()[len(crs.Releases())-1]}, true
	case "crs4.22.0":
		return Config{Name: name, Kind: KindRelease, ParanoiaLevel: 1, CRSVersion: "4.22.0"}, true
	}
	return Config{}, false
}

// nameRE is what a configuration name may be: it is a mode-name qualifier.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,31}$`)

// Parse resolves --configs (a comma-separated list of names) and
// --waf-config directories. Every --waf-config directory is a configuration
// of its own (named after its last element, lower-cased) and need not be
// listed in --configs; list is empty when only --waf-config is given.
// Duplicates are refused.
func Parse(list []string, dirs []string) ([]Config, error) {
	var out []Config
	seen := map[string]bool{}
	add := func(c Config) error {
		if seen[c.Name] {
			return fmt.Errorf("configuration %s listed twice", c.Name)
		}
		seen[c.Name] = true
		out = append(out, c)
		return nil
	}
	custom := map[string]Config{}
	for _, d := range dirs {
		name := strings.ToLower(filepath.Base(filepath.Clean(d)))
		if !nameRE.MatchString(name) {
			return nil, fmt.Errorf("--waf-config %s: the directory's name %q names the configuration: want lower-case letters, digits, '.', '_' or '-'", d, name)
		}
		if _, ok := builtin(name); ok {
			return nil, fmt.Errorf("--waf-config %s: %q is a built-in configuration's name: rename the directory", d, name)
		}
		if _, err := os.Stat(filepath.Join(d, "main.conf")); err != nil {
			return nil, fmt.Errorf("--waf-config %s: want a main.conf: %v", d, err)
		}
		custom[name] = Config{Name: name, Kind: KindDir, SourceDir: d}
	}
	for _, n := range list {
		if c, ok := builtin(n); ok {
			if err := add(c); err != nil {
				return nil, err
			}
			continue
		}
		if c, ok := custom[n]; ok {
			if err := add(c); err != nil {
				return nil, err
			}
			continue
		}
		return nil, fmt.Errorf("unknown configuration %q (built-in: %s; or a --waf-config directory's name)", n, strings.Join(Builtin(), ", "))
	}
	for _, d := range dirs {
		c := custom[strings.ToLower(filepath.Base(filepath.Clean(d)))]
		if !seen[c.Name] {
			if err := add(c); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// ExportDir is where a built-in configuration is exported, under the
// repository root.
func ExportDir(root, name string) string { return filepath.Join(root, "build", "crs-"+name) }

// Prepared is a configuration ready to load: its entry file and the hash of
// every file an engine reads from it.
type Prepared struct {
	Config
	RulesFile string            `json:"-"` // absolute path of main.conf
	SHA256    string            `json:"sha256"`
	Files     map[string]string `json:"files"` // path relative to main.conf's directory (or absolute outside it) -> SHA-256
}

// Prepare exports a built-in configuration to ExportDir(root, c.Name) (only
// files that differ are rewritten) and hashes what an engine loads: main.conf,
// every file it includes and every data file its rules name.
func Prepare(root string, c Config) (*Prepared, error) {
	dir := c.SourceDir
	if c.Kind != KindDir {
		rel, err := crs.LoadRelease(c.CRSVersion)
		if err != nil {
			return nil, fmt.Errorf("configuration %s: %w", c.Name, err)
		}
		dir = ExportDir(root, c.Name)
		if _, err := crs.Export(dir, crs.Options{ParanoiaLevel: c.ParanoiaLevel, Release: rel}); err != nil {
			return nil, fmt.Errorf("configuration %s: %w", c.Name, err)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if strings.Contains(abs, "@") {
		return nil, fmt.Errorf("configuration %s: %s contains '@', which libmodsecurity's Include cannot load", c.Name, abs)
	}
	files, err := crs.Files(abs)
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", c.Name, err)
	}
	p := &Prepared{Config: c, RulesFile: filepath.Join(abs, "main.conf"), Files: map[string]string{}}
	agg := sha256.New()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("configuration %s: %w", c.Name, err)
		}
		sum := sha256.Sum256(data)
		name := f
		if r, err := filepath.Rel(abs, f); err == nil && !strings.HasPrefix(r, "..") {
			name = filepath.ToSlash(r)
		}
		p.Files[name] = hex.EncodeToString(sum[:])
		fmt.Fprintf(agg, "%s %s\n", name, p.Files[name])
	}
	p.SHA256 = hex.EncodeToString(agg.Sum(nil))
	return p, nil
}
