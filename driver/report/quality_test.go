package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/result"
)

// appendRaw appends s to dir's raw.jsonl.
func appendRaw(t *testing.T, dir, s string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, result.RawFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestBuildSaysWhatItDropped: a torn last line of raw.jsonl is dropped
// aloud — on the warning writer, in report.md and summary.json — not
// silently.
func TestBuildSaysWhatItDropped(t *testing.T) {
	dir := copyRun(t)
	appendRaw(t, dir, `{"trial":31,"repeat":11,"mo`)
	var warn bytes.Buffer
	if err := Build(dir, &warn); err != nil {
		t.Fatal(err)
	}
	const want = "1 partial records dropped"
	if !strings.Contains(warn.String(), want) {
		t.Errorf("warnings %q do not say %q", warn.String(), want)
	}
	if md := readFile(t, filepath.Join(dir, ReportFile)); !bytes.Contains(md, []byte(want)) {
		t.Errorf("report.md does not say %q", want)
	}
	var sum struct {
		Dropped int `json:"partial_records_dropped"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, SummaryFile)), &sum); err != nil || sum.Dropped != 1 {
		t.Errorf("summary.json partial_records_dropped = %d (%v), want 1", sum.Dropped, err)
	}
}

// TestBuildExcludesImpossibleValues: a record no run can have measured is
// excluded, naming the field, instead of reaching the log-scale charts.
func TestBuildExcludesImpossibleValues(t *testing.T) {
	for _, tt := range []struct{ field, value, want string }{
		{`"p99_us":`, "1e300", "latency.p99_us = 1e+300"},
		{`"req_per_s":`, "-5", "req_per_s = -5"},
		{`"us_per_request":`, "-0.5", "envoy_cpu.us_per_request = -0.5"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			dir := copyRun(t)
			raw := readFile(t, filepath.Join(dir, result.RawFile))
			first, _, _ := bytes.Cut(raw, []byte("\n"))
			bad := bytes.Replace(first, []byte(tt.field), []byte(tt.field+tt.value+`,"x":`), 1)
			bad = bytes.Replace(bad, []byte(`"trial":1,`), []byte(`"trial":99,`), 1)
			appendRaw(t, dir, string(bad)+"\n")
			var warn bytes.Buffer
			if err := Build(dir, &warn); err != nil {
				t.Fatal(err)
			}
			md := readFile(t, filepath.Join(dir, ReportFile))
			if !bytes.Contains(md, []byte("impossible value in raw.jsonl: "+tt.want)) {
				t.Errorf("report.md does not exclude the record naming %q", tt.want)
			}
			if !strings.Contains(warn.String(), "1 records hold impossible values") {
				t.Errorf("warnings: got %q", warn.String())
			}
		})
	}
}

// TestBuildListsWindowsBehindRate: open-loop windows that did not hold
// their rate are listed in report.md and summary.json.
func TestBuildListsWindowsBehindRate(t *testing.T) {
	dir := copyRun(t)
	raw := readFile(t, filepath.Join(dir, result.RawFile))
	raw = bytes.Replace(raw, []byte(`"load":"closed","rate_requested_per_s":0,`), []byte(`"load":"open","rate_requested_per_s":30000,"late":5000,"behind_rate":true,`), 1)
	if err := os.WriteFile(filepath.Join(dir, result.RawFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(dir, nil); err != nil {
		t.Fatal(err)
	}
	md := string(readFile(t, filepath.Join(dir, ReportFile)))
	if !strings.Contains(md, "## Open-loop rate") || !strings.Contains(md, "| 1 | 1 | passthrough | headers/c16 | 30000 | 21000 | 5000 |") {
		t.Errorf("report.md does not list the window behind its rate:\n%s", md[strings.Index(md, "## Interrupted"):])
	}
	var sum struct {
		Behind []behindJSON `json:"open_loop_behind_rate"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, SummaryFile)), &sum); err != nil || len(sum.Behind) != 1 || sum.Behind[0].Late != 5000 {
		t.Errorf("summary.json open_loop_behind_rate = %+v (%v), want the one window", sum.Behind, err)
	}
}
