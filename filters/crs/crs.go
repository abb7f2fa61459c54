// Package crs writes the OWASP Core Rule Set embedded in
// github.com/corazawaf/coraza-coreruleset/v4 to a plain directory, together
// with wafbench's common engine configuration, so that libmodsecurity and
// Coraza load byte-identical rule files from the same paths.
package crs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	coreruleset "github.com/corazawaf/coraza-coreruleset/v4"
)

// Version is the CRS release embedded in the coraza-coreruleset module.
const Version = "4.25.0"

// Source names the Go module the rule files come from.
const Source = "github.com/corazawaf/coraza-coreruleset/v4@v4.25.0"

// WantRuleFiles is the number of rule .conf files CRS 4.25.0 ships.
const WantRuleFiles = 27

// File names written by Export, relative to the export directory.
const (
	RulesDir       = "rules"
	SetupFile      = "crs-setup.conf"
	CommonFile     = "wafbench-common.conf"
	Phase1File     = "wafbench-phase1.conf"
	MainFile       = "main.conf"
	ManifestFile   = "manifest.json"
	embeddedCRS    = "@owasp_crs"
	embeddedSetup  = "@crs-setup.conf.example"
	defaultPL      = 1
	defaultJSONDep = 1024
)

// Options tunes the generated common configuration. The zero value gives the
// benchmark configuration of design.md §4.
type Options struct {
	// ParanoiaLevel is CRS's tx.blocking_paranoia_level; 0 means 1.
	ParanoiaLevel int
	// JSONDepthLimit is SecRequestBodyJsonDepthLimit; 0 means 1024.
	JSONDepthLimit int
}

// Validate reports whether the options are in range.
func (o Options) Validate() error {
	if o.ParanoiaLevel < 0 || o.ParanoiaLevel > 4 {
		return fmt.Errorf("crs options: paranoia_level: want 0..4, got %d", o.ParanoiaLevel)
	}
	if o.JSONDepthLimit < 0 {
		return fmt.Errorf("crs options: json_depth_limit: want >= 0, got %d", o.JSONDepthLimit)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.ParanoiaLevel == 0 {
		o.ParanoiaLevel = defaultPL
	}
	if o.JSONDepthLimit == 0 {
		o.JSONDepthLimit = defaultJSONDep
	}
	return o
}

// FileHash is the SHA-256 of one exported file.
type FileHash struct {
	Name   string `json:"name"` // slash-separated, relative to the export directory
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
}

// Adaptation records one change wafbench made to an upstream CRS line.
type Adaptation struct {
	File   string `json:"file"` // relative to the export directory
	Line   int    `json:"line"` // 1-based
	Before string `json:"before"`
	After  string `json:"after"`
	Reason string `json:"reason"`
}

// Manifest describes an export. It is also written as manifest.json.
type Manifest struct {
	Version string `json:"crs_version"`
	Source  string `json:"source"`
	// Files lists every exported file except main.conf and manifest.json,
	// sorted by name. Their content does not depend on the export directory.
	Files []FileHash `json:"files"`
	// SHA256 covers Files: for each file in name order, the bytes of
	// name, NUL, decimal size, NUL, content.
	SHA256 string `json:"sha256"`
	// MainConf is the absolute path of main.conf; MainConfSHA256 its hash
	// (it embeds absolute paths, so it differs between directories).
	MainConf       string       `json:"main_conf"`
	MainConfSHA256 string       `json:"main_conf_sha256"`
	RuleFiles      int          `json:"rule_files"`
	ParanoiaLevel  int          `json:"paranoia_level"`
	Adaptations    []Adaptation `json:"adaptations"`
	Notes          []string     `json:"notes"`
}

// earlyBlocking matches the action-less chained rule that libmodsecurity
// 3.0.9's parser rejects (REQUEST-949 and RESPONSE-959).
var earlyBlocking = regexp.MustCompile(`^(\s*)SecRule TX:EARLY_BLOCKING "@eq 1"\s*$`)

const adaptationReason = `libmodsecurity 3.0.9 rejects a chained SecRule without an action list; "t:none" is a no-op for both engines`

// wantAdaptations is how many lines the 3.0.9 adaptation must change.
const wantAdaptations = 2

// notes explains configuration choices recorded with every export.
var notes = []string{
	"SecRuleEngine On overrides @coraza.conf-recommended's DetectionOnly; @coraza.conf-recommended is not used",
	"no urlencoded body-processor rule: both engines select URLENCODED for application/x-www-form-urlencoded by default",
	"paranoia level set by SecAction id:900000 in " + CommonFile + " (the same rule crs-setup.conf.example ships commented out)",
	"the phase-1 block rule (id 100001, " + Phase1File + ") is included after " + initFile + ": placed before it, libmodsecurity 3.0.9 leaked ~670 bytes per phase-1 block in RESPONSE-980's phase-5 rules",
}

// Export writes the CRS, crs-setup.conf, wafbench-common.conf, main.conf and
// manifest.json under dir (created if missing) and returns the manifest.
// Exporting twice to the same directory writes identical bytes.
func Export(dir string, opts Options) (*Manifest, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("crs export: dir %q: %w", dir, err)
	}
	if strings.Contains(abs, "@") {
		return nil, fmt.Errorf("crs export: dir %q: path contains '@', which libmodsecurity's Include cannot load", abs)
	}

	files := map[string][]byte{} // relative name -> content
	m := &Manifest{Version: Version, Source: Source, ParanoiaLevel: opts.ParanoiaLevel, Notes: notes}

	entries, err := fs.ReadDir(coreruleset.FS, embeddedCRS)
	if err != nil {
		return nil, fmt.Errorf("crs export: read embedded %s: %w", embeddedCRS, err)
	}
	var ruleFiles []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(coreruleset.FS, path.Join(embeddedCRS, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("crs export: read embedded %s: %w", e.Name(), err)
		}
		name := path.Join(RulesDir, e.Name())
		if strings.HasSuffix(e.Name(), ".conf") {
			ruleFiles = append(ruleFiles, name)
			var ad []Adaptation
			data, ad = adapt(name, data)
			m.Adaptations = append(m.Adaptations, ad...)
		}
		files[name] = data
	}
	sort.Strings(ruleFiles)
	if len(ruleFiles) != WantRuleFiles {
		return nil, fmt.Errorf("crs export: embedded %s: want %d rule .conf files, got %d", embeddedCRS, WantRuleFiles, len(ruleFiles))
	}
	if len(m.Adaptations) != wantAdaptations {
		return nil, fmt.Errorf("crs export: libmodsecurity 3.0.9 adaptation: want %d lines changed, got %d (CRS changed?)", wantAdaptations, len(m.Adaptations))
	}
	m.RuleFiles = len(ruleFiles)

	setup, err := fs.ReadFile(coreruleset.FS, embeddedSetup)
	if err != nil {
		return nil, fmt.Errorf("crs export: read embedded %s: %w", embeddedSetup, err)
	}
	files[SetupFile] = setup
	files[CommonFile] = commonConf(opts)
	files[Phase1File] = phase1Conf()

	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	agg := sha256.New()
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		m.Files = append(m.Files, FileHash{Name: n, SHA256: hex.EncodeToString(sum[:]), Size: len(files[n])})
		fmt.Fprintf(agg, "%s\x00%d\x00", n, len(files[n]))
		agg.Write(files[n])
	}
	m.SHA256 = hex.EncodeToString(agg.Sum(nil))

	main := mainConf(abs, ruleFiles)
	mainSum := sha256.Sum256(main)
	m.MainConf = filepath.Join(abs, MainFile)
	m.MainConfSHA256 = hex.EncodeToString(mainSum[:])
	files[MainFile] = main

	if err := os.MkdirAll(filepath.Join(abs, RulesDir), 0o755); err != nil {
		return nil, fmt.Errorf("crs export: %w", err)
	}
	for _, n := range names {
		if err := writeFile(filepath.Join(abs, filepath.FromSlash(n)), files[n]); err != nil {
			return nil, err
		}
	}
	if err := writeFile(m.MainConf, main); err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("crs export: manifest: %w", err)
	}
	if err := writeFile(filepath.Join(abs, ManifestFile), append(js, '\n')); err != nil {
		return nil, err
	}
	return m, nil
}

// ReadManifest loads dir/manifest.json written by Export.
func ReadManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("crs manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("crs manifest %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return &m, nil
}

// adapt applies the libmodsecurity 3.0.9 adaptation to one rule file.
func adapt(name string, data []byte) ([]byte, []Adaptation) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out []Adaptation
	for i, l := range lines {
		body, nl := bytes.CutSuffix(l, []byte("\n"))
		if !earlyBlocking.Match(body) {
			continue
		}
		if i == 0 || !bytes.Contains(lines[i-1], []byte(`chain"`)) {
			continue // only the chained continuation lacks actions
		}
		before := string(body)
		after := strings.TrimRight(before, " \t") + ` "t:none"`
		lines[i] = []byte(after)
		if nl {
			lines[i] = append(lines[i], '\n')
		}
		out = append(out, Adaptation{File: name, Line: i + 1, Before: before, After: after, Reason: adaptationReason})
	}
	if len(out) == 0 {
		return data, nil
	}
	return bytes.Join(lines, nil), out
}

// commonConf is the configuration both engines load before crs-setup.conf.
func commonConf(o Options) []byte {
	var b strings.Builder
	b.WriteString("# Generated by wafbench filters/crs: the common engine configuration (design.md §4).\n")
	b.WriteString("# Loaded before crs-setup.conf by both libmodsecurity and Coraza. Do not edit.\n")
	for _, l := range []string{
		"SecRuleEngine On",
		"SecRequestBodyAccess On",
		"SecRequestBodyLimit 1048576",
		"SecRequestBodyNoFilesLimit 1048576",
		"SecRequestBodyLimitAction Reject",
		fmt.Sprintf("SecRequestBodyJsonDepthLimit %d", o.JSONDepthLimit),
		"SecArgumentsLimit 1000",
		"SecResponseBodyAccess Off",
		"SecAuditEngine Off",
		``,
		`# Send JSON request bodies to the JSON body processor.`,
		`SecRule REQUEST_HEADERS:Content-Type "@rx ^application/json" "id:200001,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"`,
		``,
		`# CRS paranoia level.`,
		fmt.Sprintf(`SecAction "id:900000,phase:1,pass,t:none,nolog,setvar:tx.blocking_paranoia_level=%d"`, o.ParanoiaLevel),
	} {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// phase1Conf is the benchmark's phase-1 deny. It is included right after
// REQUEST-901-INITIALIZATION so that CRS has set its TX variables before the
// transaction ends in phase 1: when the deny came first, libmodsecurity 3.0.9
// leaked about 670 bytes per blocked request while running RESPONSE-980's
// phase-5 rules over the uninitialized scores (measured in-process and as
// Envoy RSS growth of ~17 MiB per 27k phase-1 blocks).
func phase1Conf() []byte {
	return []byte("# Generated by wafbench filters/crs: the phase-1 block of the phase1_block workload. Do not edit.\n" +
		"# Included after REQUEST-901-INITIALIZATION by both engines (see filters/crs/crs.go).\n" +
		`SecRule REQUEST_HEADERS:X-WAF-Benchmark "@streq phase1-block" "id:100001,phase:1,deny,status:403,log,msg:'wafbench phase-1 block'"` + "\n")
}

// initFile is the CRS file after which the phase-1 block is included.
const initFile = "rules/REQUEST-901-INITIALIZATION.conf"

// mainConf includes the common configuration, crs-setup.conf and the rule
// files by absolute path, with the phase-1 block after CRS initialization.
func mainConf(abs string, ruleFiles []string) []byte {
	var b strings.Builder
	b.WriteString("# Generated by wafbench filters/crs: CRS " + Version + " entry point. Do not edit.\n")
	inc := func(rel string) {
		b.WriteString("Include " + filepath.Join(abs, filepath.FromSlash(rel)) + "\n")
	}
	inc(CommonFile)
	inc(SetupFile)
	for _, r := range ruleFiles {
		inc(r)
		if r == initFile {
			inc(Phase1File)
		}
	}
	return []byte(b.String())
}

// writeFile writes data to name unless it already holds exactly data.
func writeFile(name string, data []byte) error {
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, data) {
		return nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("crs export: %w", err)
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("crs export: %w", err)
	}
	if err := os.Rename(tmp, name); err != nil {
		return fmt.Errorf("crs export: %w", err)
	}
	return nil
}
