package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"wafbench/driver/result"
)

// EnvDiffs lists how the environments of runs differ in what makes their
// numbers comparable: Envoy SHA-256, each module's SHA-256, CRS SHA-256
// and CPU model. Each run is compared with the first; names label the runs.
func EnvDiffs(names []string, metas []*result.Meta) []string {
	var diffs []string
	check := func(field string, get func(*result.Meta) string) {
		show := short // hashes are abbreviated
		if !strings.HasSuffix(field, "sha256") {
			show = orNone
		}
		a := get(metas[0])
		for i := 1; i < len(metas); i++ {
			if b := get(metas[i]); b != a {
				diffs = append(diffs, fmt.Sprintf("%s differs: run %s %s, run %s %s", field, names[0], show(a), names[i], show(b)))
			}
		}
	}
	check("envoy_sha256", func(m *result.Meta) string { return m.EnvoySHA256 })
	modes := map[string]bool{}
	for _, m := range metas {
		for k := range m.Modules {
			modes[k] = true
		}
	}
	var ms []string
	for k := range modes {
		ms = append(ms, k)
	}
	sort.Strings(ms)
	for _, k := range ms {
		check("modules."+k+".sha256", func(m *result.Meta) string { return m.Modules[k].SHA256 })
	}
	check("crs.sha256", func(m *result.Meta) string {
		if m.CRS == nil {
			return ""
		}
		return m.CRS.SHA256
	})
	check("cpu_model", func(m *result.Meta) string { return m.CPUModel })
	return diffs
}

// Merge pools the run directories dirs into a new run directory out and
// builds its report. It refuses runs whose environments differ (see
// EnvDiffs), listing every difference, unless force is set; then the
// differences are recorded in the merged meta's notes and reported as
// limitations. Repeats and trials are renumbered run after run, so pairing
// stays within a run. out must not already hold raw data, and the input
// directories are only read.
func Merge(dirs []string, out string, force bool) error {
	if len(dirs) < 2 {
		return errors.New("merge: need at least two run directories")
	}
	absOut, _ := filepath.Abs(out)
	names := make([]string, len(dirs))
	metas := make([]*result.Meta, len(dirs))
	recs := make([][]result.Record, len(dirs))
	for i, d := range dirs {
		if a, _ := filepath.Abs(d); a == absOut {
			return fmt.Errorf("merge: output %s is also an input", out)
		}
		m, err := result.ReadMeta(d)
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		r, _, err := result.ReadRecords(d)
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		metas[i], recs[i] = m, r
		names[i] = filepath.Base(filepath.Clean(d))
		if m.Name != "" {
			names[i] = m.Name
		}
	}
	if err := checkDistinct(dirs, names, metas); err != nil {
		return err
	}
	diffs := EnvDiffs(names, metas)
	if len(diffs) > 0 && !force {
		return fmt.Errorf("environments differ (pass --force to pool anyway): %s", strings.Join(diffs, "; "))
	}
	if _, err := os.Stat(filepath.Join(out, result.RawFile)); err == nil {
		return fmt.Errorf("merge: %s already holds %s; choose a new directory", out, result.RawFile)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("merge: %w", err)
	}

	merged := *metas[0]
	merged.Name = "merge of " + strings.Join(names, ", ")
	merged.Modes, merged.Workloads, merged.ModeOrder, merged.Notes = nil, nil, nil, nil
	merged.Repeats = 0
	merged.Status = "complete"
	merged.RunID, merged.MergedRuns = "", nil
	for _, m := range metas {
		merged.MergedRuns = append(merged.MergedRuns, runIDs(m)...)
	}
	// The same inputs give the same merged ID (and byte-identical outputs).
	if len(merged.MergedRuns) > 0 {
		sum := sha256.Sum256([]byte(strings.Join(merged.MergedRuns, "\n")))
		merged.RunID = hex.EncodeToString(sum[:16])
	}
	var raw bytes.Buffer
	repOff, trialOff := 0, 0
	for i, m := range metas {
		merged.Modes = appendNew(merged.Modes, m.Modes...)
		merged.Workloads = appendNew(merged.Workloads, m.Workloads...)
		merged.ModeOrder = append(merged.ModeOrder, m.ModeOrder...)
		if m.StartedUTC < merged.StartedUTC {
			merged.StartedUTC = m.StartedUTC
		}
		if m.FinishedUTC > merged.FinishedUTC {
			merged.FinishedUTC = m.FinishedUTC
		}
		if m.Status != "complete" {
			merged.Status = m.Status
		}
		merged.GitDirty = merged.GitDirty || m.GitDirty
		maxRep, maxTrial := m.Repeats, 0
		for _, r := range recs[i] {
			maxRep, maxTrial = max(maxRep, r.Repeat), max(maxTrial, r.Trial)
			r.Repeat += repOff
			r.Trial += trialOff
			b, err := json.Marshal(&r)
			if err != nil {
				return fmt.Errorf("merge: %w", err)
			}
			raw.Write(b)
			raw.WriteByte('\n')
		}
		merged.Notes = append(merged.Notes, fmt.Sprintf("merged: run %s (%s, git %s, seed %d) as repeats %d–%d",
			names[i], dirs[i], orNone(m.GitSHA), m.Seed, repOff+1, repOff+maxRep))
		for _, n := range m.Notes {
			merged.Notes = append(merged.Notes, "run "+names[i]+": "+n)
		}
		merged.Repeats += maxRep
		repOff += maxRep
		trialOff += maxTrial
	}
	for _, d := range diffs {
		merged.Notes = append(merged.Notes, EnvDifferencePrefix+d)
	}
	if err := os.WriteFile(filepath.Join(out, result.RawFile), raw.Bytes(), 0o644); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := result.WriteMeta(out, &merged); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return Build(out, nil)
}

// runIDs is the set of runs m holds: the runs it merged, else its own ID.
func runIDs(m *result.Meta) []string {
	if len(m.MergedRuns) > 0 {
		return m.MergedRuns
	}
	if m.RunID != "" {
		return []string{m.RunID}
	}
	return nil
}

// checkDistinct refuses to pool one run twice, which would count each of
// its records twice: two inputs holding the same run ID, or, for runs
// recorded before run IDs, the same directory or the same name and start
// time (a copy).
func checkDistinct(dirs, names []string, metas []*result.Meta) error {
	seen := map[string]int{}
	for i, m := range metas {
		for _, id := range runIDs(m) {
			if j, ok := seen[id]; ok {
				return fmt.Errorf("run %s (%s) and run %s (%s) both hold run %s; pooling it twice would count each of its records twice",
					names[j], dirs[j], names[i], dirs[i], id)
			}
			seen[id] = i
		}
	}
	for i := range metas {
		for j := 0; j < i; j++ {
			if len(runIDs(metas[i])) > 0 && len(runIDs(metas[j])) > 0 {
				continue // told apart by ID above
			}
			same := false
			if a, err := os.Stat(dirs[i]); err == nil {
				if b, err := os.Stat(dirs[j]); err == nil {
					same = os.SameFile(a, b)
				}
			}
			if same || (metas[i].StartedUTC != "" && metas[i].StartedUTC == metas[j].StartedUTC && metas[i].Name == metas[j].Name) {
				return fmt.Errorf("%s and %s are the same run (%s, started %s); pooling it twice would count each of its records twice",
					dirs[j], dirs[i], names[i], orNone(metas[i].StartedUTC))
			}
		}
	}
	return nil
}

func appendNew(dst []string, vs ...string) []string {
	for _, v := range vs {
		if !slices.Contains(dst, v) {
			dst = append(dst, v)
		}
	}
	return dst
}
