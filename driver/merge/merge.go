// Package merge pools several run directories (machines, CI matrix jobs,
// the shards of one design) into one new run directory: a meta.json and a
// raw.jsonl that report.Build renders like any run's. The inputs are only
// read.
package merge

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

// envDiffs lists how the environments of runs differ in what makes their
// numbers comparable: Envoy SHA-256, each module's SHA-256, CRS SHA-256
// and CPU (by fingerprint, or by model name for runs without one). Each run is compared with the first; names label the runs.
func envDiffs(names []string, metas []*result.Meta) []string {
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

// Prefixes of the notes a merge writes into the merged meta; the report
// lists them: CPUWarningPrefix and BlocksPrefix in its Environment
// section, EnvDifferencePrefix under limitations.
const (
	// CPUWarningPrefix starts a note that the runs' CPUs were compared by
	// model name only (CPUWarnings).
	CPUWarningPrefix = "CPU warning: "
	// BlocksPrefix starts a CPU difference pooled with Options.Blocks.
	BlocksPrefix = "machines as blocks: "
	// EnvDifferencePrefix starts an environment difference pooled with
	// Options.Force.
	EnvDifferencePrefix = "environment difference: "
)

// cpuDiffPrefix and modelDiffPrefix start the EnvDiffs line of a CPU
// difference, by fingerprint and by model name: merge --blocks accepts it
// (machines as blocks), plain merge refuses it.
const (
	cpuDiffPrefix   = "cpu differs"
	modelDiffPrefix = "cpu_model differs"
)

// IsCPUDiff reports whether an EnvDiffs line is a CPU difference.
func IsCPUDiff(d string) bool {
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

// cpuWarnings are the warnings Merge prints on stderr and records in the
// merged run's notes about the CPUs of runs set side by side: each CPU
// difference, and each pair compared by model name alone because a run
// lacks the fingerprint (the same model name may hide different CPUs).
func cpuWarnings(names []string, metas []*result.Meta) []string {
	out := slices.Clone(cpuDiffs(names, metas))
	for i := 1; i < len(metas); i++ {
		if (metas[0].Processor == nil || metas[i].Processor == nil) && metas[0].CPUModel == metas[i].CPUModel {
			out = append(out, fmt.Sprintf("CPU compared by model name only (%s): runs %s and %s both say %s, which may name different CPUs",
				absentFingerprint(names, metas, 0, i), names[0], names[i], orNone(metas[0].CPUModel)))
		}
	}
	return out
}

// Options say what a merge may pool.
type Options struct {
	// Force pools runs whose environments differ (EnvDiffs); the
	// differences become limitations of the report.
	Force bool
	// Blocks pools runs from different machines (different CPUs
	// too) with each machine as a block: the merged meta records which
	// repeats ran on which machine, and the report analyses every paired
	// ratio with the machine as a random effect.
	Blocks bool
	// Warn, when set, receives one "merge: warning: …" line per CPU
	// warning (CPUWarnings).
	Warn io.Writer
}

// input is one run directory given to a merge.
type input struct {
	dir, name string
	meta      *result.Meta
	recs      []result.Record
}

// Runs pools the run directories dirs into a new run directory out: its
// meta.json and raw.jsonl (report.Build renders it). It refuses runs whose
// environments differ (see EnvDiffs), listing every difference, unless
// o.Force is set; then the differences are recorded in the merged meta's
// notes and reported as limitations. One directory is enough when it is a
// shard. With o.Blocks, runs of different CPU models are accepted and each
// machine becomes a block (Options.Blocks). Repeats and trials are
// renumbered run after run, so pairing stays within a run; shards of one
// design (run --shard) keep the design's repeat numbers, and must agree on
// everything that defines the design (checkShards, refused even with
// o.Force). out must not already hold raw data, and the input directories
// are only read.
func Runs(dirs []string, out string, o Options) error {
	if len(dirs) < 2 && !(len(dirs) == 1 && isShard(dirs[0])) {
		return errors.New("merge: need at least two run directories (or one shard)")
	}
	ins, err := readInputs(dirs, out)
	if err != nil {
		return err
	}
	names, metas := make([]string, len(ins)), make([]*result.Meta, len(ins))
	for i, in := range ins {
		names[i], metas[i] = in.name, in.meta
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
	diffs := envDiffs(names, metas)
	if err := refuse(diffs, o); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(out, result.RawFile)); err == nil {
		return fmt.Errorf("merge: %s already holds %s; choose a new directory", out, result.RawFile)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	merged, raw, err := pool(ins, sharded, o.Blocks)
	if err != nil {
		return err
	}
	merged.Notes = append(merged.Notes, envNotes(names, metas, diffs, o)...)
	if err := os.WriteFile(filepath.Join(out, result.RawFile), raw, 0o644); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := result.WriteMeta(out, merged); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

// readInputs reads each run directory's meta and records; a run is named
// by its meta's name, else by its directory's. out must not be an input.
func readInputs(dirs []string, out string) ([]input, error) {
	absOut, _ := filepath.Abs(out)
	ins := make([]input, len(dirs))
	for i, d := range dirs {
		if a, _ := filepath.Abs(d); a == absOut {
			return nil, fmt.Errorf("merge: output %s is also an input", out)
		}
		m, err := result.ReadMeta(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		r, _, err := result.ReadRecords(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		ins[i] = input{dir: d, name: filepath.Base(filepath.Clean(d)), meta: m, recs: r}
		if m.Name != "" {
			ins[i].name = m.Name
		}
	}
	return ins, nil
}

// refuse returns the error of a merge whose environments differ in what o
// does not accept.
func refuse(diffs []string, o Options) error {
	refused := diffs
	if o.Blocks {
		refused = nil
		for _, d := range diffs {
			if !IsCPUDiff(d) {
				refused = append(refused, d)
			}
		}
	}
	if len(refused) == 0 || o.Force {
		return nil
	}
	hint := "pass --force to pool anyway"
	if !o.Blocks && len(refused) == 1 && IsCPUDiff(refused[0]) {
		hint = "pass --blocks to pool the machines as blocks"
	}
	return fmt.Errorf("environments differ (%s): %s", hint, strings.Join(refused, "; "))
}

// pool builds the merged meta and raw.jsonl of the inputs: the first run's
// meta with the union of modes and workloads, the span of start and finish
// times, every run's notes, and records renumbered run after run (shards
// keep their design's repeat numbers).
func pool(ins []input, sharded, blocks bool) (*result.Meta, []byte, error) {
	merged := mergedHead(ins)
	var raw bytes.Buffer
	var bs blockSet
	orders := map[int][]string{} // shards: mode order by design repeat
	repOff, trialOff := 0, 0
	for _, in := range ins {
		m := in.meta
		mergeFields(merged, m, sharded, orders)
		maxRep, maxTrial := m.Repeats, 0
		reps := map[int]bool{}
		for _, r := range in.recs {
			maxRep, maxTrial = max(maxRep, r.Repeat), max(maxTrial, r.Trial)
			r.Repeat += repOff
			r.Trial += trialOff
			reps[r.Repeat] = true
			b, err := json.Marshal(&r)
			if err != nil {
				return nil, nil, fmt.Errorf("merge: %w", err)
			}
			raw.Write(b)
			raw.WriteByte('\n')
		}
		bs.add(m, in.name, repOff, reps)
		merged.Notes = append(merged.Notes, runNote(in, sharded, repOff, maxRep))
		for _, n := range m.Notes {
			merged.Notes = append(merged.Notes, "run "+in.name+": "+n)
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
		metas := make([]*result.Meta, len(ins))
		for i := range ins {
			metas[i] = ins[i].meta
		}
		merged.Shards = shardSet(metas)
		for _, rep := range merged.Shards.Repeats {
			merged.ModeOrder = append(merged.ModeOrder, orders[rep])
		}
	}
	if blocks {
		merged.Blocks = bs.list()
	}
	return merged, raw.Bytes(), nil
}

// mergedHead is the merged meta before the inputs' fields are pooled into
// it: the first run's, renamed, with the merged run IDs and an ID of its
// own derived from them (the same inputs give the same ID and
// byte-identical outputs).
func mergedHead(ins []input) *result.Meta {
	merged := *ins[0].meta
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.name
	}
	merged.Name = "merge of " + strings.Join(names, ", ")
	merged.Modes, merged.Workloads, merged.ModeOrder, merged.Notes = nil, nil, nil, nil
	merged.Repeats = 0
	merged.Status = "complete"
	merged.RunID, merged.MergedRuns = "", nil
	merged.Shard, merged.Shards, merged.Blocks = nil, nil, nil
	for _, in := range ins {
		merged.MergedRuns = append(merged.MergedRuns, runIDs(in.meta)...)
		if in.meta.Machine != merged.Machine {
			merged.Machine = ""
		}
	}
	if len(merged.MergedRuns) > 0 {
		sum := sha256.Sum256([]byte(strings.Join(merged.MergedRuns, "\n")))
		merged.RunID = hex.EncodeToString(sum[:16])
	}
	return &merged
}

// mergeFields pools m's modes, workloads, mode order, times, status and
// dirty flag into merged; a shard's mode orders go to orders by design
// repeat.
func mergeFields(merged, m *result.Meta, sharded bool, orders map[int][]string) {
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
}

// runNote is the merged meta's note on where an input's records went.
func runNote(in input, sharded bool, repOff, maxRep int) string {
	m := in.meta
	if sharded {
		return fmt.Sprintf("merged: shard %d/%d, run %s (%s, git %s, seed %d): design repeats %s",
			m.Shard.Index, m.Shard.Count, in.name, in.dir, orNone(m.GitSHA), m.Seed, Span(m.Shard.Repeats))
	}
	return fmt.Sprintf("merged: run %s (%s, git %s, seed %d) as repeats %d–%d",
		in.name, in.dir, orNone(m.GitSHA), m.Seed, repOff+1, repOff+maxRep)
}

// envNotes are the merged meta's notes on its runs' environments: CPU
// warnings (each also written to o.Warn), then each difference pooled with
// --blocks (machines) or --force.
func envNotes(names []string, metas []*result.Meta, diffs []string, o Options) []string {
	var notes []string
	for _, w := range cpuWarnings(names, metas) {
		if o.Warn != nil {
			fmt.Fprintln(o.Warn, "merge: warning: "+w)
		}
		if !IsCPUDiff(w) {
			notes = append(notes, CPUWarningPrefix+w)
		}
	}
	for _, d := range diffs {
		if o.Blocks && IsCPUDiff(d) {
			notes = append(notes, BlocksPrefix+d)
			continue
		}
		notes = append(notes, EnvDifferencePrefix+d)
	}
	return notes
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

// isShard reports whether dir holds a shard of a design (run --shard): a
// merge of it alone is the design's "1 of N shards".
func isShard(dir string) bool {
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

// Span lists repeat numbers (ascending) with runs of consecutive numbers
// joined, as the notes of a merge of shards do: "1–6, 10–12", "4".
func Span(reps []int) string {
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

func orNone(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return orNone(h)
}
