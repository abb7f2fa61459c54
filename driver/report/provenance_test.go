package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/merge"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// zen is a CPU fingerprint as meta.json records it; avx512 toggles the
// AVX-512 extensions, the difference between two "AMD EPYC" machines.
func zen(family int, avx512 bool) *result.Processor {
	isa := map[string]bool{}
	for _, x := range result.ISAChecked {
		isa[x] = !strings.HasPrefix(x, "avx512") || avx512
	}
	return &result.Processor{Vendor: "AuthenticAMD", Family: family, Model: 1, Stepping: 1, ModelName: "AMD EPYC", MHz: 2000,
		ISA: isa, L1dKiB: 32, L2KiB: 512, L3KiB: 32768, Hypervisor: true, HypervisorVendor: "KVMKVMKVM"}
}

// TestModuleHashCrossCheck: a mode whose meta.json hash is not the hash
// its preflights took of the file Envoy loaded (coraza-wasm's, before meta
// recorded the .wasm) is flagged in the cross-checks and the limitations;
// a matching mode is not.
func TestModuleHashCrossCheck(t *testing.T) {
	meta := syntheticMeta("hashes", "AMD EPYC", fakeHash("envoy"))
	recs := syntheticRecords()
	for i := range recs {
		r := &recs[i]
		if r.Workload != "headers" {
			continue
		}
		switch r.Mode {
		case "coraza":
			r.Preflight = &result.Preflight{ModulePath: "build/filters/coraza.wasm", ModuleSHA256: fakeHash("the wasm")}
		case "modsecurity":
			r.Preflight = &result.Preflight{ModulePath: meta.Modules["modsecurity"].Path, ModuleSHA256: meta.Modules["modsecurity"].SHA256}
		}
	}
	var buf bytes.Buffer
	if err := writeReport(&buf, &figures{Meta: meta, Records: recs, Summary: stats.Summarize(recs), Quality: &quality{}, Growth: &growthFigures{}}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	cross := reportSection(t, md, "## Measurement cross-checks")
	if rows := rowsWith(cross, "modsecurity"); len(rows) != 1 || rows[0][2] != "matches 5 preflights" {
		t.Errorf("modsecurity: got rows %q, want one that matches 5 preflights", rows)
	}
	if rows := rowsWith(cross, "coraza"); len(rows) != 1 || !strings.Contains(rows[0][2], "**differs**: preflight of trial") || !strings.Contains(rows[0][2], "build/filters/coraza.wasm") {
		t.Errorf("coraza: got rows %q, want one flagging the .wasm's hash", rows)
	}
	lim := reportSection(t, md, "## Limitations")
	if !strings.Contains(lim, "module hash recorded for coraza in meta.json is not the hash") || strings.Contains(lim, "for modsecurity in meta.json") {
		t.Errorf("limitations: got\n%s\nwant coraza's module hash flagged, modsecurity's not", lim)
	}
	if !strings.Contains(lim, "CPU fingerprint (family, model, stepping, ISA extensions, caches, hypervisor) was not recorded") {
		t.Errorf("limitations: got\n%s\nwant the missing CPU fingerprint named", lim)
	}
}

// TestTicksCrossCheck: a window whose /proc ticks lie beyond 4 ticks + 2 %
// of its schedstat CPU is counted and named; the synthetic run's own
// windows (ticks within a tick of schedstat) agree; windows without
// ticks (CLK_TCK unmeasured) are counted apart.
func TestTicksCrossCheck(t *testing.T) {
	meta := syntheticMeta("ticks", "AMD EPYC", fakeHash("envoy"))
	meta.ClkTck = 100
	recs := syntheticRecords()
	if c := checkTicks(meta, recs); len(c.Disagree) != 0 || c.Checked != len(recs) {
		t.Fatalf("synthetic run: got %d of %d windows disagreeing, want 0 of %d", len(c.Disagree), c.Checked, len(recs))
	}
	recs[3].CPU.TicksNs = recs[3].CPU.SchedstatNs * 11 / 10 // 10 % off
	recs[4].CPU.TicksNs = 0
	c := checkTicks(meta, recs)
	if len(c.Disagree) != 1 || c.Disagree[0].Trial != recs[3].Trial || c.NoTicks != 1 {
		t.Errorf("got %d disagreeing, %d without ticks; want trial %d alone, and 1 without ticks", len(c.Disagree), c.NoTicks, recs[3].Trial)
	}
	var buf bytes.Buffer
	if err := writeReport(&buf, &figures{Meta: meta, Records: recs, Summary: stats.Summarize(recs), Quality: &quality{}, Growth: &growthFigures{}}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if !strings.Contains(reportSection(t, md, "## Measurement cross-checks"), "measured CLK_TCK 100) against the ns counters (schedstat, process CPU clock), tolerance 4 ticks + 2%: 1 of") ||
		!strings.Contains(reportSection(t, md, "## Limitations"), "/proc ticks and the ns CPU counters disagree beyond 4 ticks + 2%") {
		t.Errorf("report lacks the ticks disagreement:\n%s", reportSection(t, md, "## Measurement cross-checks"))
	}
	meta.Unmeasured = []string{"mode coraza: engine version: no build information"}
	buf.Reset()
	if err := writeReport(&buf, &figures{Meta: meta, Records: recs, Summary: stats.Summarize(recs), Quality: &quality{}, Growth: &growthFigures{}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "- Not measured: mode coraza: engine version: no build information.") {
		t.Error("report does not show what meta.json lists as unmeasured")
	}
}

// TestMergeComparesCPUFingerprints: two runs that both say "AMD EPYC" but
// ran on CPUs of different fingerprints are refused without --blocks (and
// warned about on stderr with it); runs without a fingerprint are compared
// by model name, with a warning that says the fingerprint is absent.
func TestMergeComparesCPUFingerprints(t *testing.T) {
	dir := t.TempDir()
	run := func(name string, p *result.Processor) string {
		d := filepath.Join(dir, name)
		meta := syntheticMeta(name, "AMD EPYC", fakeHash("envoy"))
		meta.RunID, meta.Processor = fakeHash(name)[:32], p
		if err := writeRun(d, meta, syntheticRecords()); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b, same := run("zen2-512", zen(23, true)), run("zen3", zen(25, false)), run("zen2-512-again", zen(23, true))
	oldA, oldB := run("old-a", nil), run("old-b", nil)

	err := mergeRuns([]string{a, b}, filepath.Join(dir, "m1"), merge.Options{})
	if err == nil || !strings.Contains(err.Error(), "cpu differs (by fingerprint): run zen2-512 AMD EPYC (AuthenticAMD family 23") ||
		!strings.Contains(err.Error(), "--blocks") {
		t.Fatalf("merge of two CPUs both named AMD EPYC: got %v, want a refusal naming both fingerprints and --blocks", err)
	}
	var warn bytes.Buffer
	if err := mergeRuns([]string{a, b}, filepath.Join(dir, "m2"), merge.Options{Blocks: true, Warn: &warn}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(warn.String(), "merge: warning: cpu differs (by fingerprint)") || !strings.Contains(warn.String(), "lacks avx512f avx512bw avx512vl") {
		t.Errorf("stderr: got %q, want a warning naming the fingerprints", warn.String())
	}
	md := string(readFile(t, filepath.Join(dir, "m2", ReportFile)))
	if rows := rowsWith(reportSection(t, md, "## Environment"), "**warning: runs set side by side**"); len(rows) != 1 {
		t.Errorf("Environment: got %q, want one warning row", rows)
	}

	warn.Reset()
	if err := mergeRuns([]string{a, same}, filepath.Join(dir, "m3"), merge.Options{Warn: &warn}); err != nil || warn.Len() != 0 {
		t.Errorf("same fingerprint: got %v, stderr %q; want a silent merge", err, warn.String())
	}

	warn.Reset()
	if err := mergeRuns([]string{oldA, oldB}, filepath.Join(dir, "m4"), merge.Options{Warn: &warn}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warn.String(), "merge: warning: CPU compared by model name only (no CPU fingerprint in run old-a, run old-b)") {
		t.Errorf("stderr: got %q, want the absent fingerprint named", warn.String())
	}
	md = string(readFile(t, filepath.Join(dir, "m4", ReportFile)))
	if rows := rowsWith(reportSection(t, md, "## Environment"), "**warning: runs set side by side**"); len(rows) != 1 || !strings.Contains(rows[0][1], "model name only") {
		t.Errorf("Environment: got %q, want a warning that the CPUs were compared by model name only", rows)
	}
}
