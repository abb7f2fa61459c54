package conformance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"

	"wafbench/internal/crs"
)

// stageEnd finds a stage's end marker in a marker rule's log line and
// names its test (wafbench-920100-4-1-end, …-1-retry-end).
var stageEnd = regexp.MustCompile(`wafbench-(\d+-\d+)-\d+(?:-retry)?-end`)

// TrimLog is a host log of a crs-test run cut to what explains its
// verdicts: the lines before the first stage (start-up, the logging
// proof) and every line of the windows of the tests keep selects (those
// that did not pass somewhere), each window from the line after the
// previous marker through the test's end marker. A first line says what
// was cut and the original's size and SHA-256. The lines of tests that
// passed everywhere are dropped: crs-test.json holds their statuses and
// rule IDs, and their tens of megabytes would not fit the committed
// results budget (driver/keep).
func TrimLog(data []byte, keep func(test string) bool) []byte {
	var out bytes.Buffer
	var window [][]byte
	kept, dropped := 0, 0
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		window = append(window, line)
		if !bytes.Contains(line, []byte(`[id "`+strconv.Itoa(crs.MarkerRuleID)+`"]`)) || !bytes.Contains(line, []byte("wafbench-")) {
			continue
		}
		// A window ends at a marker: a stage's end marker (kept when keep
		// selects its test), or another marker (start-up, the logging
		// proof, a first start marker: kept).
		m := stageEnd.FindSubmatch(line)
		if m == nil || keep(string(m[1])) {
			if m != nil {
				kept++
			}
			for _, l := range window {
				out.Write(l)
			}
		} else {
			dropped++
		}
		window = window[:0]
	}
	for _, l := range window { // after the last marker: shutdown
		out.Write(l)
	}
	sum := sha256.Sum256(data)
	head := fmt.Sprintf("# wafbench keep: trimmed to the start-up lines and the windows of %d stages of tests that did not pass in some mode (%d windows of passing tests dropped); original %d bytes, sha256 %s\n",
		kept, dropped, len(data), hex.EncodeToString(sum[:]))
	return append([]byte(head), out.Bytes()...)
}

// NotPassed is the set of tests that failed or were overridden in some
// mode of r (a test not run has no log lines).
func (r *run) NotPassed() map[string]bool {
	out := map[string]bool{}
	for _, m := range r.Modes {
		for _, t := range m.Tests {
			if t.Outcome == Failed || t.Outcome == overridden {
				out[t.ID] = true
			}
		}
	}
	return out
}
