// Package report rebuilds every derived output of a run directory from its
// raw files (meta.json, raw.jsonl): summary.json, bench.txt in the Go
// benchmark format for benchstat, report.md, report.html and the SVG
// charts. It never writes to the raw files. Build runs in three steps: one
// analysis (Figures: every figure the report shows, from meta, records and
// the run's optional inputs), the pictures (charts, flame graphs), then the
// outputs, each a pure writer over the Figures: report.md is the list of
// sections in sections.go, report.html renders it.
package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"wafbench/driver/protection"

	"wafbench/driver/internal/usage"
	"wafbench/driver/result"
	"wafbench/driver/stats"
	"wafbench/internal/atomicfile"
)

// Output names inside a run directory.
const (
	SummaryFile = "summary.json"
	BenchFile   = "bench.txt"
	ReportFile  = "report.md"
	ChartsDir   = "charts"
)

// Build reads dir/meta.json and dir/raw.jsonl and (re)writes summary.json,
// bench.txt, report.md, report.html and charts/*.svg in dir. When dir holds
// engine-bench.txt (scripts/overhead.sh), summary.json and report.md gain
// an integration-overhead section; when it holds loadgen.jsonl
// (scripts/vs-wrk.sh), report.md gains a "Load engine vs wrk" section. The
// same input files always give byte-identical outputs. Every file is
// written to a temporary name and renamed, so a failed write leaves no
// empty or partial file.
//
// What the report had to set aside — a torn last line of raw.jsonl (a crash
// or full disk mid-write), records with impossible values — is stated in
// report.md and summary.json and, one line each, written to warn (may be nil).
func Build(dir string, warn io.Writer) error {
	meta, recs, dropped, err := readRun(dir)
	if err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	fig := analyse(meta, recs, dropped)
	if warn != nil {
		for _, l := range fig.Quality.lines() {
			fmt.Fprintf(warn, "wafbench: report %s: %s\n", dir, l)
		}
	}
	if err := readInputs(dir, fig); err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	dep, err := protection.Read(dir)
	if err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	fig.Deployed = analyseDeployed(dep, fig.Summary)
	if err := draw(dir, fig); err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	if fig.Files, err = listFiles(dir, SummaryFile, BenchFile, ReportFile); err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	var md bytes.Buffer
	if err := writeReport(&md, fig); err != nil {
		return fmt.Errorf("report %s: %s: %w", dir, ReportFile, err)
	}
	// The outputs, report.md and its HTML page side by side: the page
	// renders report.md, so the two carry the same content.
	outs := []struct {
		name  string
		write func(io.Writer) error
	}{
		{SummaryFile, func(w io.Writer) error { return writeSummary(w, fig) }},
		{BenchFile, func(w io.Writer) error { return writeBench(w, fig.Meta, fig.Records) }},
		{ReportFile, func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }},
		{HTMLFile, func(w io.Writer) error { return writeHTML(w, md.Bytes(), fig.Files) }},
	}
	for _, o := range outs {
		var buf bytes.Buffer
		if err := o.write(&buf); err != nil {
			return fmt.Errorf("report %s: %s: %w", dir, o.name, err)
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, o.name), buf.Bytes()); err != nil {
			return fmt.Errorf("report %s: %w", dir, err)
		}
	}
	return nil
}

// cpuCell prints CPU µs per request; noValue where no proxy process was
// measured (ref-direct has none, so its CPU is not sampled).
func cpuCell(v float64) string {
	if v == 0 {
		return noValue
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// Table writes one fixed-width row per record to w, for a terminal: trial,
// repeat, mode, workload, conns, req/s, CPU µs/req, p50 and p99 in ms,
// errors, and a note for interrupted or failed trials.
func Table(w io.Writer, recs []result.Record) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "trial\trepeat\tmode\tworkload\tconns\treq/s\tCPU µs/req\tp50 ms\tp99 ms\terrors\t  note")
	for i := range recs {
		r := &recs[i]
		note := ""
		if r.Interrupted {
			note = "  interrupted"
		}
		if r.Error != "" {
			note = "  failed"
		}
		if r.BehindRate && r.Error == "" {
			note = "  behind rate"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%d\t%.0f\t%s\t%.3f\t%.3f\t%d\t%s\n",
			r.Trial, r.Repeat, r.Mode, r.Workload, r.Conns, r.ReqPerS, cpuCell(r.CPU.UsPerRequest),
			r.Latency.P50Us/1000, r.Latency.P99Us/1000, stats.ErrorCount(r), note)
	}
	return tw.Flush()
}

// BuildRun is 'wafbench report': Build after checking that dir is a run
// directory (bad input, driver/internal/usage, when it has no raw.jsonl).
func BuildRun(dir string, warn io.Writer) error {
	if !result.HasRaw(dir) {
		return usage.Errorf("report: %s is not a run directory (no raw.jsonl)", dir)
	}
	return Build(dir, warn)
}
