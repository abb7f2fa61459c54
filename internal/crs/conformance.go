package crs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
)

// The conformance configuration "crs-test": what CRS's own CI and Coraza's
// in-process test run the CRS regression suite with (CRS's test settings), over
// the same exported rule files and the same wafbench-common.conf as the
// benchmark. It is a separate, named entry point beside main.conf; a
// measured trial never loads it (its preflight requires the canary attack
// to be denied, which DetectionOnly never does, and refuses this file by
// name).
const (
	// ConformanceName names the configuration in results and metadata.
	ConformanceName = "crs-test"
	// ConformanceFile is the entry point, beside main.conf.
	ConformanceFile = "crs-test.conf"
	// ConformanceSettingsFile holds the lines loaded before crs-setup.conf.
	conformanceSettingsFile = "wafbench-crs-test.conf"
	// ConformanceLateFile holds the lines loaded after crs-setup.conf.
	conformanceLateFile = "wafbench-crs-test-late.conf"
	// MarkerRuleID is the rule that logs each request carrying MarkerHeader,
	// with the header's value as its msg (the match-log contract both modules
	// follow, filters/*/README.md).
	MarkerRuleID = 999999
	// MarkerHeader carries a marker request's value.
	markerHeader = "X-CRS-Test"
	// ConformanceParanoiaLevel is the blocking and detection paranoia level.
	conformanceParanoiaLevel = 4
)

// conformance describes the crs-test configuration of an export; it is
// recorded in the export's manifest and in every crs-test run's meta.
type conformance struct {
	Name string `json:"name"`
	// File is the entry point's absolute path; SHA256 its hash.
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	// Settings are the lines the configuration adds to the benchmark's
	// (wafbench-common.conf, crs-setup.conf, the same 27 rule files with the
	// same adaptations), in load order.
	Settings []setting `json:"settings"`
	// Files are the two settings files with their hashes.
	Files []fileHash `json:"files"`
}

// conformanceEarly are the lines loaded after wafbench-common.conf and
// before crs-setup.conf: they override the benchmark's engine mode and
// response settings.
func conformanceEarly() []setting {
	dir := func(name, args, why string) setting { return setting{Name: name, Line: name + " " + args, Why: why} }
	return []setting{
		dir("SecRuleEngine", "DetectionOnly", "as CRS's CI and Coraza's test: evaluate every rule, log every match, block nothing, so every rule of a request is seen"),
		dir("SecResponseBodyAccess", "On", "the RESPONSE-95x tests inspect response bodies (the backend's /reflect)"),
		dir("SecResponseBodyMimeType", "text/plain text/html text/xml application/json", "modsecurity.conf-recommended's types, plus the JSON the reflect tests may declare"),
		dir("SecResponseBodyLimit", "524288", "modsecurity.conf-recommended"),
		dir("SecResponseBodyLimitAction", "ProcessPartial", "modsecurity.conf-recommended: inspect the first 512 KiB of a larger body"),
	}
}

// conformanceLate are the lines loaded after crs-setup.conf and before the
// rules: default actions for the response and logging phases, the CRS test
// settings and the marker rule.
func conformanceLate() []setting {
	rule := func(id int, line, why string) setting {
		return setting{Name: fmt.Sprintf("rule %d", id), Line: line, Why: why}
	}
	dir := func(name, args, why string) setting { return setting{Name: name, Line: name + " " + args, Why: why} }
	return []setting{
		dir("SecDefaultAction", `"phase:3,log,auditlog,pass"`, "CRS test setup: the response-phase rules log and pass"),
		dir("SecDefaultAction", `"phase:4,log,auditlog,pass"`, "CRS test setup"),
		dir("SecDefaultAction", `"phase:5,log,auditlog,pass"`, "CRS test setup"),
		rule(900005, fmt.Sprintf(`SecAction "id:900005,phase:1,nolog,pass,t:none,setvar:tx.blocking_paranoia_level=%d,setvar:tx.detection_paranoia_level=%d,%s"`, conformanceParanoiaLevel, conformanceParanoiaLevel, conformanceVarActions()),
			"the CRS test settings in one SecAction, as Coraza's test does; runs after 900000 (paranoia level 1) in the same phase, so level 4 wins"),
		rule(MarkerRuleID, fmt.Sprintf(`SecRule REQUEST_HEADERS:%s "@rx ^.*$" "id:%d,phase:1,pass,t:none,log,msg:'%s %%{MATCHED_VAR}',ctl:ruleEngine=Off"`, markerHeader, MarkerRuleID, markerHeader),
			"the marker rule: logs each request carrying X-CRS-Test with the header's name and value (as CRS's own test setup does: go-ftw's runner takes a log line as a marker only if it holds both), so the runner finds the log lines between two markers; it then turns the engine off for that request (no test request carries X-CRS-Test), so a marker costs the host almost nothing and none of its own matches is logged inside a test's window"),
	}
}

// conformanceVars are the CRS test settings beyond the paranoia level, in
// the order rule 900005 sets them; the benchmark configuration sets none.
var conformanceVars = [][2]string{
	{"crs_validate_utf8_encoding", "1"}, {"arg_name_length", "100"}, {"arg_length", "400"},
	{"total_arg_length", "64000"}, {"max_num_args", "255"}, {"max_file_size", "64100"}, {"combined_file_sizes", "65535"},
}

func conformanceVarActions() string {
	var b strings.Builder
	for i, v := range conformanceVars {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "setvar:tx.%s=%s", v[0], v[1])
	}
	return b.String()
}

// ConformanceOnlyVars names the TX variables the crs-test configuration
// sets and the benchmark's does not (lower case, without "tx."): a rule
// that reads one of them (920250's UTF-8 check, 920360–920410's argument
// and file limits) does nothing in a benchmark trial.
func ConformanceOnlyVars() []string {
	out := make([]string, len(conformanceVars))
	for i, v := range conformanceVars {
		out[i] = v[0]
	}
	return out
}

func settingsConf(title string, set []setting) []byte {
	var b strings.Builder
	b.WriteString("# Generated by wafbench internal/crs: " + title + ". Do not edit.\n")
	for _, s := range set {
		b.WriteString("\n# " + s.Why + "\n" + s.Line + "\n")
	}
	return []byte(b.String())
}

// conformanceFiles returns the crs-test files (name → content) and their
// description. They are not part of Manifest.Files, so the benchmark's CRS
// hash does not change with them.
func conformanceFiles(abs string, ruleFiles []string) (map[string][]byte, *conformance) {
	early, late := conformanceEarly(), conformanceLate()
	files := map[string][]byte{
		conformanceSettingsFile: settingsConf("the crs-test settings loaded before crs-setup.conf", early),
		conformanceLateFile:     settingsConf("the crs-test settings loaded after crs-setup.conf", late),
	}
	var b strings.Builder
	b.WriteString("# Generated by wafbench internal/crs: the crs-test conformance entry point (CRS " + version + " regression suite). Do not edit.\n")
	b.WriteString("# Never used by a measured trial.\n")
	inc := func(rel string) { b.WriteString("Include " + filepath.Join(abs, filepath.FromSlash(rel)) + "\n") }
	inc(CommonFile)
	inc(conformanceSettingsFile)
	inc(setupFile)
	inc(conformanceLateFile)
	for _, r := range ruleFiles {
		inc(r)
	}
	entry := []byte(b.String())
	files[ConformanceFile] = entry
	c := &conformance{Name: ConformanceName, File: filepath.Join(abs, ConformanceFile), Settings: append(early, late...)}
	sum := sha256.Sum256(entry)
	c.SHA256 = hex.EncodeToString(sum[:])
	for _, n := range []string{conformanceSettingsFile, conformanceLateFile} {
		s := sha256.Sum256(files[n])
		c.Files = append(c.Files, fileHash{Name: n, SHA256: hex.EncodeToString(s[:]), Size: len(files[n])})
	}
	return files, c
}
