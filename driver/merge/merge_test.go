package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// syntheticRunDir is the report package's synthetic run (go test
// ./driver/report -update rewrites it): 3 modes × 2 workloads × 5 repeats.
const syntheticRunDir = "../report/testdata/run"

// copyRun copies the synthetic run's raw files into a new directory.
func copyRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{result.MetaFile, result.RawFile} {
		b, err := os.ReadFile(filepath.Join(syntheticRunDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// setMeta edits dir's meta.json with edit.
func setMeta(t *testing.T, dir string, edit func(*result.Meta)) {
	t.Helper()
	m, err := result.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	if err := result.WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
}

func TestMerge(t *testing.T) {
	a, b := copyRun(t), copyRun(t)
	mb, _ := result.ReadMeta(b)
	mb.Name = "second"
	if err := result.WriteMeta(b, mb); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "merged")
	if err := Runs([]string{a, b}, out, Options{}); err != nil {
		t.Fatalf("Merge of compatible runs: %v", err)
	}
	recs, _, err := result.ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 60 || recs[59].Repeat != 10 || recs[59].Trial != 30 {
		t.Fatalf("merged %d records, last repeat %d trial %d; want 60, 10, 30", len(recs), recs[59].Repeat, recs[59].Trial)
	}
	s := stats.Summarize(recs)
	if c := s.Comparisons[0]; c.N() != 10 {
		t.Errorf("merged comparison n = %d, want 10", c.N())
	}
	if err := Runs([]string{a, b}, out, Options{}); err == nil || !strings.Contains(err.Error(), "already holds") {
		t.Errorf("Merge into an existing run: err = %v, want refusal", err)
	}
}

// TestMergeRefusesOneRunTwice: pooling a run with itself (the same
// directory, a copy with the same run ID, or — before run IDs — a copy with
// the same name and start time) would count every record twice.
func TestMergeRefusesOneRunTwice(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	tests := []struct {
		name string
		dirs func(t *testing.T) []string
		want string // "" = pooled
	}{
		{"same directory", func(t *testing.T) []string { a := copyRun(t); return []string{a, a} }, "same run"},
		{"copy, same run ID", func(t *testing.T) []string {
			a, b := copyRun(t), copyRun(t)
			for _, d := range []string{a, b} {
				setMeta(t, d, func(m *result.Meta) { m.RunID = id })
			}
			setMeta(t, b, func(m *result.Meta) { m.Name = "renamed" })
			return []string{a, b}
		}, "both hold run " + id},
		{"copy without run ID", func(t *testing.T) []string { return []string{copyRun(t), copyRun(t)} }, "same run"},
		{"distinct runs", func(t *testing.T) []string {
			a, b := copyRun(t), copyRun(t)
			setMeta(t, a, func(m *result.Meta) { m.RunID = result.NewRunID() })
			setMeta(t, b, func(m *result.Meta) { m.RunID = result.NewRunID() })
			return []string{a, b}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			dirs := tt.dirs(t)
			err := Runs(dirs, out, Options{})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("got %v, want the runs pooled", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "twice")):
				t.Fatalf("got %v, want a refusal containing %q", err, tt.want)
			}
			if tt.want != "" {
				return
			}
			m, err := result.ReadMeta(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.MergedRuns) != 2 || m.RunID == "" {
				t.Errorf("merged meta: run_id %q, merged_run_ids %v; want an ID and both inputs'", m.RunID, m.MergedRuns)
			}
			// A merge holds its inputs' IDs: pooling it with one of them is refused.
			err = Runs([]string{out, dirs[0]}, filepath.Join(t.TempDir(), "again"), Options{})
			if err == nil || !strings.Contains(err.Error(), "twice") {
				t.Errorf("merge of a merge with one of its inputs: got %v, want a refusal", err)
			}
		})
	}
}
