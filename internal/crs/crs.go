// Package crs writes the OWASP Core Rule Set embedded in
// github.com/corazawaf/coraza-coreruleset/v4 to a plain directory, together
// with wafbench's common engine configuration, so that libmodsecurity and
// Coraza load byte-identical rule files from the same paths.
//
// The common configuration (wafbench-common.conf, see Settings) adopts what
// both projects' recommended configurations do, in a form both engines
// support: body processors chosen by Content-Type (JSON, XML), and a 400 for
// every request whose body could not be parsed, failed the strict multipart
// checks, or carries more arguments than the engines inspect, so that no
// request passes uninspected. Files lists every file an engine reads.
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
	"strconv"
	"strings"

	"wafbench/internal/rulefiles"
)

// version is the CRS release embedded in the coraza-coreruleset module;
// CheckVersion proves it against the module linked and the rules' own
// signature, and Export refuses to run when they disagree.
const version = "4.25.0"

// source names the Go module the rule files come from.
const source = "github.com/corazawaf/coraza-coreruleset/v4@v4.25.0"

// WantRuleFiles is the number of rule .conf files CRS 4.25.0 ships.
const WantRuleFiles = 27

// File names written by Export, relative to the export directory.
const (
	rulesDir       = "rules"
	setupFile      = "crs-setup.conf"
	CommonFile     = "wafbench-common.conf"
	phase1File     = "wafbench-phase1.conf"
	mainFile       = "main.conf"
	manifestFile   = "manifest.json"
	embeddedCRS    = "@owasp_crs"
	embeddedSetup  = "@crs-setup.conf.example"
	defaultPL      = 1
	defaultJSONDep = 1024
	defaultMaxArgs = 1000
)

// requestBodyLimit is the largest request body, in bytes, both engines
// inspect. The modules' own max_body_bytes (envoy.Config.MaxBodyBytes) is set
// to the same value and answers 413 for a larger body before the engine sees
// it; the engines' SecRequestBodyLimitAction Reject is the second line.
const requestBodyLimit = 1 << 20

// Options tunes the generated common configuration. The zero value gives the
// benchmark configuration of the upgle/envoy-modsecurity benchmark.
type Options struct {
	// ParanoiaLevel is CRS's tx.blocking_paranoia_level; 0 means 1.
	ParanoiaLevel int
	// JSONDepthLimit is SecRequestBodyJsonDepthLimit; 0 means 1024.
	JSONDepthLimit int
	// MaxArguments is the most arguments (query, body and JSON/XML-derived,
	// counted together) a request may carry; a request with more is denied
	// with 400 before any of them could go uninspected. 0 means 1000.
	MaxArguments int
	// Release is the CRS release whose rule files are exported; nil means
	// the release embedded in this program (Embedded).
	Release *Release
}

// Validate reports whether the options are in range.
func (o Options) Validate() error {
	if o.ParanoiaLevel < 0 || o.ParanoiaLevel > 4 {
		return fmt.Errorf("crs options: paranoia_level: want 0..4, got %d", o.ParanoiaLevel)
	}
	if o.JSONDepthLimit < 0 {
		return fmt.Errorf("crs options: json_depth_limit: want >= 0, got %d", o.JSONDepthLimit)
	}
	if o.MaxArguments < 0 {
		return fmt.Errorf("crs options: max_arguments: want >= 0 (0 means %d), got %d", defaultMaxArgs, o.MaxArguments)
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
	if o.MaxArguments == 0 {
		o.MaxArguments = defaultMaxArgs
	}
	return o
}

// fileHash is the SHA-256 of one exported file.
type fileHash struct {
	Name   string `json:"name"` // slash-separated, relative to the export directory
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
}

// adaptation records one change wafbench made to an upstream CRS line.
type adaptation struct {
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
	Files []fileHash `json:"files"`
	// SHA256 covers Files: for each file in name order, the bytes of
	// name, NUL, decimal size, NUL, content.
	SHA256 string `json:"sha256"`
	// MainConf is the absolute path of main.conf; MainConfSHA256 its hash
	// (it embeds absolute paths, so it differs between directories).
	MainConf       string `json:"main_conf"`
	MainConfSHA256 string `json:"main_conf_sha256"`
	RuleFiles      int    `json:"rule_files"`
	ParanoiaLevel  int    `json:"paranoia_level"`
	// Settings lists every line of wafbench-common.conf, in file order.
	Settings    []setting    `json:"settings"`
	Adaptations []adaptation `json:"adaptations"`
	Notes       []string     `json:"notes"`
	// Conformance is the crs-test configuration written beside main.conf
	// (conformance.go); not covered by SHA256.
	Conformance *conformance `json:"conformance,omitempty"`
}

// setting is one line of wafbench-common.conf: an engine directive or a rule
// that both engines load.
type setting struct {
	// Name is the directive (e.g. "SecArgumentsLimit") or "rule <id>".
	Name string `json:"name"`
	// Line is the exact configuration line written to the file.
	Line string `json:"line"`
	// Why says what the line is for and, where the engines differ, how the
	// line makes them behave alike.
	Why string `json:"why"`
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
	"no urlencoded or multipart body-processor rule: both engines select URLENCODED and MULTIPART from Content-Type by default",
	"settings lists every line of " + CommonFile + " with its reason; where libmodsecurity 3.0.9 and Coraza 3.8.1 parse bodies differently, tests/e2e/testdata/disagreements.yaml says how",
	"paranoia level set by SecAction id:900000 in " + CommonFile + " (the same rule crs-setup.conf.example ships commented out)",
	"the phase-1 block rule (id 100001, " + phase1File + ") is included after " + initFile + ": placed before it, libmodsecurity 3.0.9 leaked ~670 bytes per phase-1 block in RESPONSE-980's phase-5 rules",
}

// Export writes the CRS, crs-setup.conf, wafbench-common.conf, main.conf and
// manifest.json under dir (created if missing) and returns the manifest.
// Exporting twice to the same directory writes identical bytes.
func Export(dir string, opts Options) (*Manifest, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	rel := opts.Release
	if rel == nil {
		if err := CheckVersion(); err != nil {
			return nil, err
		}
		rel = Embedded()
	}
	opts = opts.withDefaults()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("crs export: dir %q: %w", dir, err)
	}
	if strings.Contains(abs, "@") {
		return nil, fmt.Errorf("crs export: dir %q: path contains '@', which libmodsecurity's Include cannot load", abs)
	}

	m := &Manifest{Version: rel.Version, Source: rel.Source, ParanoiaLevel: opts.ParanoiaLevel, Settings: settings(opts), Notes: notes}
	files, ruleFiles, err := exportRules(rel, m)
	if err != nil {
		return nil, err
	}
	setup, err := fs.ReadFile(rel.FS, embeddedSetup)
	if err != nil {
		return nil, fmt.Errorf("crs export: read embedded %s: %w", embeddedSetup, err)
	}
	files[setupFile] = setup
	files[CommonFile] = commonConf(m.Settings)
	files[phase1File] = phase1Conf()
	names := hashFiles(m, files)

	main := mainConf(abs, rel.Version, ruleFiles)
	mainSum := sha256.Sum256(main)
	m.MainConf = filepath.Join(abs, mainFile)
	m.MainConfSHA256 = hex.EncodeToString(mainSum[:])
	files[mainFile] = main
	conf, cdesc := conformanceFiles(abs, ruleFiles)
	m.Conformance = cdesc
	if err := writeExport(abs, m, names, files, conf); err != nil {
		return nil, err
	}
	return m, nil
}

// exportRules reads rel's rule files, adapted for libmodsecurity (each
// change recorded in m), and checks their count; it returns every file by
// its relative name and the sorted names of the rule .conf files.
func exportRules(rel *Release, m *Manifest) (map[string][]byte, []string, error) {
	files := map[string][]byte{} // relative name -> content
	entries, err := fs.ReadDir(rel.FS, embeddedCRS)
	if err != nil {
		return nil, nil, fmt.Errorf("crs export: read embedded %s: %w", embeddedCRS, err)
	}
	var ruleFiles []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(rel.FS, path.Join(embeddedCRS, e.Name()))
		if err != nil {
			return nil, nil, fmt.Errorf("crs export: read embedded %s: %w", e.Name(), err)
		}
		name := path.Join(rulesDir, e.Name())
		if strings.HasSuffix(e.Name(), ".conf") {
			ruleFiles = append(ruleFiles, name)
			var ad []adaptation
			data, ad = adapt(name, data)
			m.Adaptations = append(m.Adaptations, ad...)
		}
		files[name] = data
	}
	sort.Strings(ruleFiles)
	if len(ruleFiles) != rel.RuleFiles {
		return nil, nil, fmt.Errorf("crs export: CRS %s %s: want %d rule .conf files, got %d", rel.Version, embeddedCRS, rel.RuleFiles, len(ruleFiles))
	}
	if len(m.Adaptations) != wantAdaptations {
		return nil, nil, fmt.Errorf("crs export: libmodsecurity 3.0.9 adaptation: want %d lines changed, got %d (CRS changed?)", wantAdaptations, len(m.Adaptations))
	}
	m.RuleFiles = len(ruleFiles)
	return files, ruleFiles, nil
}

// hashFiles records each file's hash and the aggregate hash over all of
// them in m; it returns the files' names, sorted.
func hashFiles(m *Manifest, files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	agg := sha256.New()
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		m.Files = append(m.Files, fileHash{Name: n, SHA256: hex.EncodeToString(sum[:]), Size: len(files[n])})
		fmt.Fprintf(agg, "%s\x00%d\x00", n, len(files[n]))
		agg.Write(files[n])
	}
	m.SHA256 = hex.EncodeToString(agg.Sum(nil))
	return names
}

// writeExport writes the named files, the main configuration, the
// conformance files and the manifest under abs.
func writeExport(abs string, m *Manifest, names []string, files, conf map[string][]byte) error {
	if err := os.MkdirAll(filepath.Join(abs, rulesDir), 0o755); err != nil {
		return fmt.Errorf("crs export: %w", err)
	}
	for _, n := range names {
		if err := writeFile(filepath.Join(abs, filepath.FromSlash(n)), files[n]); err != nil {
			return err
		}
	}
	if err := writeFile(m.MainConf, files[mainFile]); err != nil {
		return err
	}
	for n, data := range conf {
		if err := writeFile(filepath.Join(abs, n), data); err != nil {
			return err
		}
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("crs export: manifest: %w", err)
	}
	return writeFile(filepath.Join(abs, manifestFile), append(js, '\n'))
}

// ReadManifest loads dir/manifest.json written by Export.
func ReadManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		return nil, fmt.Errorf("crs manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("crs manifest %s: %w", filepath.Join(dir, manifestFile), err)
	}
	return &m, nil
}

// Files lists every file an engine reads when it loads dir/main.conf, as
// absolute paths in the order they are first read: main.conf, each file it
// includes (recursively; a glob includes its matches in name order) and,
// after each configuration file, the data files its rules name with
// @pmFromFile, @pmf, @ipMatchFromFile or @ipMatchF (a relative name resolves
// against the directory of the file that names it, as both engines do).
// A missing file is an error. Hashing these files hashes what Envoy loads.
func Files(dir string) ([]string, error) {
	files, err := rulefiles.Walk(filepath.Join(dir, mainFile), nil)
	if err != nil {
		return nil, fmt.Errorf("crs files: %w", err)
	}
	return files, nil
}

// adapt applies the libmodsecurity 3.0.9 adaptation to one rule file.
func adapt(name string, data []byte) ([]byte, []adaptation) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out []adaptation
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
		out = append(out, adaptation{File: name, Line: i + 1, Before: before, After: after, Reason: adaptationReason})
	}
	if len(out) == 0 {
		return data, nil
	}
	return bytes.Join(lines, nil), out
}

// Status codes of the common configuration's own denials.
const (
	// StatusUninspectable answers a request whose body could not be parsed,
	// failed the strict multipart checks, or carries more arguments than
	// both engines inspect.
	statusUninspectable = 400
)

// settings are the lines of wafbench-common.conf. Every directive and
// variable used here is supported by both libmodsecurity 3.0.9 and Coraza
// 3.8.1; where the two engines' recommended configurations differ, the rule
// below is the form that behaves the same in both (see Why).
func settings(o Options) []setting {
	dir := func(name, args, why string) setting {
		return setting{Name: name, Line: name + " " + args, Why: why}
	}
	rule := func(id int, line, why string) setting {
		return setting{Name: fmt.Sprintf("rule %d", id), Line: line, Why: why}
	}
	deny := fmt.Sprintf("phase:2,t:none,log,deny,status:%d", statusUninspectable)
	return []setting{
		dir("SecRuleEngine", "On", "enforce (both projects' recommended files ship DetectionOnly)"),
		dir("SecRequestBodyAccess", "On", "inspect request bodies"),
		dir("SecRequestBodyLimit", strconv.Itoa(requestBodyLimit+1),
			fmt.Sprintf("the modules answer 413 above %d bytes before the engine sees the body; libmodsecurity rejects a body longer than the limit, Coraza one that reaches it, so limit+1 makes both inspect every body up to %d bytes", requestBodyLimit, requestBodyLimit)),
		dir("SecRequestBodyNoFilesLimit", strconv.Itoa(requestBodyLimit+1),
			"equal to SecRequestBodyLimit, so it never decides alone: Coraza 3.8.1 parses but does not enforce it (coraza#896), libmodsecurity sets REQBODY_ERROR above it"),
		dir("SecRequestBodyLimitAction", "Reject", "never inspect part of a body"),
		dir("SecRequestBodyJsonDepthLimit", strconv.Itoa(o.JSONDepthLimit), "deeper JSON is a parse error (REQBODY_ERROR, rule 200002)"),
		dir("SecArgumentsLimit", strconv.Itoa(o.MaxArguments+1),
			fmt.Sprintf("one more than the %d arguments a request may carry, so that rule 200007 sees the excess; libmodsecurity caps ARGS as a whole, Coraza each of ARGS_GET/ARGS_POST/ARGS_PATH", o.MaxArguments)),
		dir("SecResponseBodyAccess", "Off", "the benchmark inspects requests only"),
		dir("SecAuditEngine", "Off", "no audit log I/O in the measured path"),
		rule(200000, `SecRule REQUEST_HEADERS:Content-Type "@rx ^(?:application(?:/soap\+|/)|text/)xml" "id:200000,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=XML"`,
			"XML body processor for application/xml, application/soap+xml and text/xml (both recommended files); without it Coraza parsed XML as URLENCODED after CRS 901340 and libmodsecurity inspected only REQUEST_BODY"),
		rule(200001, `SecRule REQUEST_HEADERS:Content-Type "@rx ^application/json" "id:200001,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"`,
			"JSON body processor for application/json (both recommended files)"),
		rule(200006, `SecRule REQUEST_HEADERS:Content-Type "@rx ^application/[a-z0-9.-]+[+]json" "id:200006,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"`,
			"JSON body processor for application/*+json (coraza.conf-recommended; CRS allows application/cloudevents+json)"),
		rule(200002, `SecRule REQBODY_ERROR "!@eq 0" "id:200002,`+deny+`,msg:'wafbench: request body could not be parsed',logdata:'%{reqbody_error_msg}'"`,
			"deny a body the selected processor could not parse (malformed JSON/XML/multipart, JSON deeper than the limit): its content would go uninspected"),
		rule(200003, `SecRule MULTIPART_STRICT_ERROR "!@eq 0" "id:200003,`+deny+`,msg:'wafbench: multipart body failed strict validation'"`,
			"strict multipart checks (both recommended files); each engine sets the variable from its own parser's findings"),
		rule(200004, `SecRule MULTIPART_UNMATCHED_BOUNDARY "@eq 1" "id:200004,`+deny+`,msg:'wafbench: multipart body has an unmatched boundary'"`,
			"as in modsecurity.conf-recommended; Coraza 3.8.1 accepts the variable but never sets it, and libmodsecurity 3.0.9 resets it to 2 at every matching boundary after the first, so in both engines rules 200002/200003 decide (tests/e2e/testdata/disagreements.yaml)"),
		rule(200007, fmt.Sprintf(`SecRule &ARGS "@gt %d" "id:200007,%s,msg:'wafbench: more than %d arguments'"`, o.MaxArguments, deny, o.MaxArguments),
			"deny a request with more arguments than the engines inspect (modsecurity.conf-recommended's &ARGS rule; Coraza's ARGUMENTS_LIMIT_REACHED is unknown to libmodsecurity)"),
		rule(200005, `SecRule TX:/^MSC_/ "!@streq 0" "id:200005,`+deny+`,msg:'wafbench: engine internal error flagged: %{MATCHED_VAR_NAME}'"`,
			"modsecurity.conf-recommended: libmodsecurity 3.0.10 and later set TX:MSC_PCRE_LIMITS_EXCEEDED when a regex hits its match limit (the rule would otherwise silently not match); 3.0.9 and Coraza set no MSC_ variable, so there it never fires"),
		rule(200008, `SecRule INBOUND_DATA_ERROR "@eq 1" "id:200008,`+deny+`,msg:'wafbench: request body over the limit'"`,
			"second line behind SecRequestBodyLimitAction Reject: never evaluate a request whose body was cut"),
		rule(900000, fmt.Sprintf(`SecAction "id:900000,phase:1,pass,t:none,nolog,setvar:tx.blocking_paranoia_level=%d"`, o.ParanoiaLevel),
			"CRS paranoia level (the rule crs-setup.conf.example ships commented out)"),
	}
}

// commonConf is the configuration both engines load before crs-setup.conf.
func commonConf(set []setting) []byte {
	var b strings.Builder
	b.WriteString("# Generated by wafbench internal/crs: the common engine configuration.\n")
	b.WriteString("# Loaded before crs-setup.conf by both libmodsecurity and Coraza. Do not edit.\n")
	for _, s := range set {
		b.WriteString("\n# " + s.Why + "\n")
		b.WriteString(s.Line + "\n")
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
	return []byte("# Generated by wafbench internal/crs: the phase-1 block of the phase1_block workload. Do not edit.\n" +
		"# Included after REQUEST-901-INITIALIZATION by both engines (see internal/crs/crs.go).\n" +
		`SecRule REQUEST_HEADERS:X-WAF-Benchmark "@streq phase1-block" "id:100001,phase:1,deny,status:403,log,msg:'wafbench phase-1 block'"` + "\n")
}

// initFile is the CRS file after which the phase-1 block is included.
const initFile = "rules/REQUEST-901-INITIALIZATION.conf"

// mainConf includes the common configuration, crs-setup.conf and the rule
// files by absolute path, with the phase-1 block after CRS initialization.
func mainConf(abs, version string, ruleFiles []string) []byte {
	var b strings.Builder
	b.WriteString("# Generated by wafbench internal/crs: CRS " + version + " entry point. Do not edit.\n")
	inc := func(rel string) {
		b.WriteString("Include " + filepath.Join(abs, filepath.FromSlash(rel)) + "\n")
	}
	inc(CommonFile)
	inc(setupFile)
	for _, r := range ruleFiles {
		inc(r)
		if r == initFile {
			inc(phase1File)
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
