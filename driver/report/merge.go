package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"wafbench/driver/result"
)

// EnvDiffs lists how the environments of runs differ in what makes their
// numbers comparable: Envoy SHA-256, each module's SHA-256, CRS SHA-256
// and CPU (by fingerprint, or by model name for runs without one). Each run is compared with the first; names label the runs.
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
	diffs = append(diffs, cpuDiffs(names, metas)...)
	return diffs
}

// CPUWarningPrefix starts a merged run's note that its runs' CPUs were
// compared by model name only (CPUWarnings); the report's Environment
// section repeats such notes and the CPU differences.
const CPUWarningPrefix = "CPU warning: "

// cpuDiffPrefix and modelDiffPrefix start the EnvDiffs line of a CPU
// difference, by fingerprint and by model name: merge --blocks accepts it
// (machines as blocks), plain merge refuses it.
const (
	cpuDiffPrefix   = "cpu differs"
	modelDiffPrefix = "cpu_model differs"
)

// isCPUDiff reports whether an EnvDiffs line is a CPU difference.
func isCPUDiff(d string) bool {
	return strings.HasPrefix(d, cpuDiffPrefix) || strings.HasPrefix(d, modelDiffPrefix)
}

// cpuDiffs compares each run's CPU with the first run's: by fingerprint
// (result.Processor) when both recorded one, else by cpu_model, saying that
// the fingerprint is absent.
func cpuDiffs(names []string, metas []*result.Meta) []string {
	var out []string
	a := metas[0]
	for i := 1; i < len(metas); i++ {
		b := metas[i]
		if a.Processor != nil && b.Processor != nil {
			if fa, fb := a.Processor.Fingerprint(), b.Processor.Fingerprint(); fa != fb {
				out = append(out, fmt.Sprintf("%s (by fingerprint): run %s %s (%s), run %s %s (%s)", cpuDiffPrefix,
					names[0], orNone(a.CPUModel), fa, names[i], orNone(b.CPUModel), fb))
			}
			continue
		}
		if a.CPUModel != b.CPUModel {
			out = append(out, fmt.Sprintf("%s: run %s %s, run %s %s (%s: compared by cpu_model)", modelDiffPrefix,
				names[0], orNone(a.CPUModel), names[i], orNone(b.CPUModel), absentFingerprint(names, metas, 0, i)))
		}
	}
	return out
}

// absentFingerprint names which of runs i and j lack a CPU fingerprint.
func absentFingerprint(names []string, metas []*result.Meta, i, j int) string {
	var lack []string
	for _, k := range []int{i, j} {
		if metas[k].Processor == nil {
			lack = append(lack, names[k])
		}
	}
	return "no CPU fingerprint in run " + strings.Join(lack, ", run ")
}

// CPUWarnings are the warnings Merge prints on stderr and records in the
// merged run's notes about the CPUs of runs set side by side: each CPU
// difference, and each pair compared by model name alone because a run
// lacks the fingerprint (the same model name may hide different CPUs).
func CPUWarnings(names []string, metas []*result.Meta) []string {
	out := slices.Clone(cpuDiffs(names, metas))
	for i := 1; i < len(metas); i++ {
		if (metas[0].Processor == nil || metas[i].Processor == nil) && metas[0].CPUModel == metas[i].CPUModel {
			out = append(out, fmt.Sprintf("CPU compared by model name only (%s): runs %s and %s both say %s, which may name different CPUs",
				absentFingerprint(names, metas, 0, i), names[0], names[i], orNone(metas[0].CPUModel)))
		}
	}
	return out
}

// MergeOptions say what a merge may pool.
type MergeOptions struct {
	// Force pools runs whose environments differ (EnvDiffs); the
	// differences become limitations of the report.
	Force bool
	// Blocks pools runs from different machines (different CPUs
	// too) with each machine as a block: the merged meta records which
	// repeats ran on which machine, and the report analyses every paired
	// ratio with the machine as a random effect (see writeBlocks).
	Blocks bool
	// Warn, when set, receives one "merge: warning: …" line per CPU
	// warning (CPUWarnings).
	Warn io.Writer
}

// Merge pools the run directories dirs into a new run directory out and
// builds its report: MergeWith without blocks.
func Merge(dirs []string, out string, force bool) error {
	return MergeWith(dirs, out, MergeOptions{Force: force})
}

// MergeWith pools the run directories dirs into a new run directory out and
// builds its report. It refuses runs whose environments differ (see
// EnvDiffs), listing every difference, unless o.Force is set; then the
// differences are recorded in the merged meta's notes and reported as
// limitations. One directory is enough when it is a shard. With o.Blocks, runs of different CPU models are accepted
// and each machine becomes a block (MergeOptions.Blocks). Repeats and
// trials are renumbered run after run, so pairing stays within a run;
// shards of one design (run --shard) keep the design's repeat numbers, and
// must agree on everything that defines the design (shardDiffs, refused
// even with o.Force). out must not already hold raw data, and the input
// directories are only read.
func MergeWith(dirs []string, out string, o MergeOptions) error {
	if len(dirs) < 2 && !(len(dirs) == 1 && IsShard(dirs[0])) {
		return errors.New("merge: need at least two run directories (or one shard)")
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
	sharded := allShards(metas)
	if sharded {
		if err := checkShards(names, metas); err != nil {
			return err
		}
	}
	diffs := EnvDiffs(names, metas)
	refused := diffs
	if o.Blocks {
		refused = nil
		for _, d := range diffs {
			if !isCPUDiff(d) {
				refused = append(refused, d)
			}
		}
	}
	if len(refused) > 0 && !o.Force {
		hint := "pass --force to pool anyway"
		if !o.Blocks && len(refused) == 1 && isCPUDiff(refused[0]) {
			hint = "pass --blocks to pool the machines as blocks"
		}
		return fmt.Errorf("environments differ (%s): %s", hint, strings.Join(refused, "; "))
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
	merged.Shard, merged.Shards, merged.Blocks = nil, nil, nil
	for _, m := range metas {
		merged.MergedRuns = append(merged.MergedRuns, runIDs(m)...)
		if m.Machine != merged.Machine {
			merged.Machine = ""
		}
	}
	// The same inputs give the same merged ID (and byte-identical outputs).
	if len(merged.MergedRuns) > 0 {
		sum := sha256.Sum256([]byte(strings.Join(merged.MergedRuns, "\n")))
		merged.RunID = hex.EncodeToString(sum[:16])
	}
	var raw bytes.Buffer
	var blocks blockSet
	orders := map[int][]string{} // shards: mode order by design repeat
	repOff, trialOff := 0, 0
	for i, m := range metas {
		merged.Modes = appendNew(merged.Modes, m.Modes...)
		merged.Workloads = appendNew(merged.Workloads, m.Workloads...)
		if sharded {
			for k, rep := range m.Shard.Repeats {
				if k < len(m.ModeOrder) {
					orders[rep] = m.ModeOrder[k]
				}
			}
		} else {
			merged.ModeOrder = append(merged.ModeOrder, m.ModeOrder...)
		}
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
		reps := map[int]bool{}
		for _, r := range recs[i] {
			maxRep, maxTrial = max(maxRep, r.Repeat), max(maxTrial, r.Trial)
			r.Repeat += repOff
			r.Trial += trialOff
			reps[r.Repeat] = true
			b, err := json.Marshal(&r)
			if err != nil {
				return fmt.Errorf("merge: %w", err)
			}
			raw.Write(b)
			raw.WriteByte('\n')
		}
		blocks.add(m, names[i], repOff, reps)
		if sharded {
			merged.Notes = append(merged.Notes, fmt.Sprintf("merged: shard %d/%d, run %s (%s, git %s, seed %d): design repeats %s",
				m.Shard.Index, m.Shard.Count, names[i], dirs[i], orNone(m.GitSHA), m.Seed, span(m.Shard.Repeats)))
		} else {
			merged.Notes = append(merged.Notes, fmt.Sprintf("merged: run %s (%s, git %s, seed %d) as repeats %d–%d",
				names[i], dirs[i], orNone(m.GitSHA), m.Seed, repOff+1, repOff+maxRep))
		}
		for _, n := range m.Notes {
			merged.Notes = append(merged.Notes, "run "+names[i]+": "+n)
		}
		if sharded {
			merged.Repeats += len(m.Shard.Repeats)
		} else {
			merged.Repeats += maxRep
			repOff += maxRep
		}
		trialOff += maxTrial
	}
	if sharded {
		merged.Shards = shardSet(metas)
		for _, rep := range merged.Shards.Repeats {
			merged.ModeOrder = append(merged.ModeOrder, orders[rep])
		}
	}
	if o.Blocks {
		merged.Blocks = blocks.list()
	}
	for _, w := range CPUWarnings(names, metas) {
		if o.Warn != nil {
			fmt.Fprintln(o.Warn, "merge: warning: "+w)
		}
		if !isCPUDiff(w) {
			merged.Notes = append(merged.Notes, CPUWarningPrefix+w)
		}
	}
	for _, d := range diffs {
		if o.Blocks && isCPUDiff(d) {
			merged.Notes = append(merged.Notes, "machines as blocks: "+d)
			continue
		}
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

// IsShard reports whether dir holds a shard of a design (run --shard): a
// merge of it alone is the design's "1 of N shards".
func IsShard(dir string) bool {
	m, err := result.ReadMeta(dir)
	return err == nil && m.Shard != nil
}

// allShards reports whether every input is a shard of a design (run
// --shard): then the merge keeps the design's repeat numbers.
func allShards(metas []*result.Meta) bool {
	for _, m := range metas {
		if m.Shard == nil {
			return false
		}
	}
	return true
}

// checkShards refuses shards that are not slices of one design, naming
// every difference in one line: suite, modes, workloads, each mode's build
// (name and recipe hash), CRS hash, shard count, design repeats, order,
// seed, trial scope and the window flags; and a shard given twice.
func checkShards(names []string, metas []*result.Meta) error {
	var diffs []string
	check := func(field string, get func(*result.Meta) string) {
		a := get(metas[0])
		for i := 1; i < len(metas); i++ {
			if b := get(metas[i]); b != a {
				diffs = append(diffs, fmt.Sprintf("%s differs: run %s %s, run %s %s", field, names[0], orNone(a), names[i], orNone(b)))
			}
		}
	}
	check("suite", func(m *result.Meta) string { return m.Suite })
	check("modes", func(m *result.Meta) string { return strings.Join(m.Modes, ",") })
	check("workloads", func(m *result.Meta) string { return strings.Join(m.Workloads, ",") })
	var modes []string
	for _, m := range metas {
		modes = appendNew(modes, m.Modes...)
	}
	for _, mode := range modes {
		check("build of "+mode, func(m *result.Meta) string { return buildID(m.Modules[mode]) })
	}
	check("crs.sha256", func(m *result.Meta) string {
		if m.CRS == nil {
			return ""
		}
		return short(m.CRS.SHA256)
	})
	check("shards", func(m *result.Meta) string { return fmt.Sprint(m.Shard.Count) })
	check("design repeats", func(m *result.Meta) string { return fmt.Sprint(m.Shard.DesignRepeats) })
	check("order", func(m *result.Meta) string { return m.Order })
	check("seed", func(m *result.Meta) string { return fmt.Sprint(m.Seed) })
	check("trial scope", func(m *result.Meta) string { return m.TrialScope })
	for _, fl := range []string{"duration", "warmup", "trial-warmup", "rate", "max-requests", "concurrency"} {
		check("--"+fl, func(m *result.Meta) string { return m.Flags[fl] })
	}
	if len(diffs) > 0 {
		return fmt.Errorf("shards of one design must agree: %s", strings.Join(diffs, "; "))
	}
	seen := map[int]int{}
	for i, m := range metas {
		if j, ok := seen[m.Shard.Index]; ok {
			return fmt.Errorf("shard %d/%d given twice: runs %s and %s; a design's shard runs once", m.Shard.Index, m.Shard.Count, names[j], names[i])
		}
		seen[m.Shard.Index] = i
	}
	return nil
}

// buildID is a mode's engine build as a shard records it: build name and
// the manifest's recipe hash ("" for modes without a module).
func buildID(mod result.Module) string {
	if mod.BuildName == "" && mod.Manifest == nil {
		return ""
	}
	var man struct {
		RecipeHash string `json:"recipe_hash"`
	}
	if len(mod.Manifest) > 0 {
		json.Unmarshal(mod.Manifest, &man)
	}
	return strings.TrimSpace(mod.BuildName + " recipe " + short(man.RecipeHash))
}

// shardSet is what a merge of shards holds of their design.
func shardSet(metas []*result.Meta) *result.ShardSet {
	s := &result.ShardSet{Count: metas[0].Shard.Count, DesignRepeats: metas[0].Shard.DesignRepeats}
	have := map[int]bool{}
	for _, m := range metas {
		have[m.Shard.Index] = true
		s.Repeats = append(s.Repeats, m.Shard.Repeats...)
	}
	sort.Ints(s.Repeats)
	for i := range s.Count {
		if have[i] {
			s.Present = append(s.Present, i)
		} else {
			s.Missing = append(s.Missing, i)
		}
	}
	return s
}

// blockSet collects the machines of a merge --blocks, in input order.
type blockSet struct {
	list_ []result.Block
	index map[string]int
}

// add files the repeats reps (already renumbered by off) of the run m
// under its machine; a merged run's own blocks are carried over.
func (b *blockSet) add(m *result.Meta, name string, off int, reps map[int]bool) {
	if len(m.Blocks) > 0 {
		for _, blk := range m.Blocks {
			shifted := map[int]bool{}
			for _, r := range blk.Repeats {
				shifted[r+off] = true
			}
			b.put(blk.Machine, blk.CPUModel, blk.Runs, shifted)
		}
		return
	}
	key := m.Machine
	if key == "" {
		key = "run " + name
		if ids := runIDs(m); len(ids) > 0 {
			key = "run " + short(ids[0])
		}
	}
	b.put(key, m.CPUModel, []string{name}, reps)
}

func (b *blockSet) put(machine, cpuModel string, runs []string, reps map[int]bool) {
	if b.index == nil {
		b.index = map[string]int{}
	}
	i, ok := b.index[machine]
	if !ok {
		i = len(b.list_)
		b.index[machine] = i
		b.list_ = append(b.list_, result.Block{Machine: machine, CPUModel: cpuModel})
	}
	blk := &b.list_[i]
	blk.Runs = append(blk.Runs, runs...)
	for r := range reps {
		if !slices.Contains(blk.Repeats, r) {
			blk.Repeats = append(blk.Repeats, r)
		}
	}
	sort.Ints(blk.Repeats)
}

func (b *blockSet) list() []result.Block { return b.list_ }

// span lists repeat numbers (ascending) with runs of consecutive numbers
// joined: "1–6, 10–12", "4".
func span(reps []int) string {
	if len(reps) == 0 {
		return "none"
	}
	var parts []string
	for i := 0; i < len(reps); {
		j := i
		for j+1 < len(reps) && reps[j+1] == reps[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(reps[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", reps[i], reps[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
