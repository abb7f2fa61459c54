package builds

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"wafbench/driver/internal/host"
	"wafbench/driver/result"
)

// trainer runs the PGO loop of a pgo build: build the instrumented build,
// run the training suite through it in Envoy, check that every training
// workload passed, merge the profile, then build the optimised build.
type trainer struct {
	Runner *Runner
	// Wafbench is the wafbench binary that runs the training suite.
	Wafbench string
	// Cases are the training suite's workloads ("name@conns"); every one
	// must appear in the training run without errors.
	Cases []string
	// RunArgs are extra flags for 'wafbench run' (e.g. --builds, --profiles).
	RunArgs []string
}

// errTraining marks a training run that produced no usable profile.
var errTraining = errors.New("training failed")

// train writes b's profile (see Build.ProfilePath) and its info file. Only a
// complete, error-free training replaces an existing profile.
func (t *trainer) train(ctx context.Context, b *Build) (*profileInfo, error) {
	if b.PGO == nil {
		return nil, fmt.Errorf("build %s has no pgo field: nothing to train", b.Mode())
	}
	if b.Engine == Coraza {
		return t.trainGo(ctx, b)
	}
	return t.trainInstrumented(ctx, b)
}

// trainInstrumented trains the profile of a clang build: the training
// suite on its instrumented pgo.from build, the raw profiles merged and
// checked, then installed with their info beside the build file.
func (t *trainer) trainInstrumented(ctx context.Context, b *Build) (*profileInfo, error) {
	r := t.Runner
	start := time.Now()
	from, ok := r.Set.Find(b.Engine + "@" + b.PGO.From)
	if !ok {
		return nil, fmt.Errorf("build %s: pgo.from %s not found", b.Mode(), b.PGO.From)
	}
	if _, _, err := r.build(ctx, from); err != nil {
		return nil, err
	}
	profdata := "llvm-profdata" + strings.TrimPrefix(b.Compiler, "clang")
	pgoDir := filepath.Join(r.Root, "build", "pgo")
	work, err := trainingDir(pgoDir, b)
	if err != nil {
		return nil, err
	}
	keep := true
	defer func() {
		if !keep {
			os.RemoveAll(work)
		}
	}()
	raw := filepath.Join(work, "raw")
	label := b.Mode() + " training"
	tr, err := t.runTraining(ctx, b, from, work, label)
	if err != nil {
		return nil, err
	}
	merged := filepath.Join(work, "merged.profdata")
	nonEmpty, err := t.mergeProfiles(ctx, raw, merged, profdata, label, tr.Trials)
	if err != nil {
		return nil, err
	}
	counted, total, err := profileCoverage(ctx, profdata, merged)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", label, err, errTraining)
	}
	if counted == 0 {
		return nil, fmt.Errorf("%s: the merged profile has no function with a non-zero count: %w", label, errTraining)
	}
	profRel, infoRel := b.profilePath()
	sum, err := host.FileSHA256(merged)
	if err != nil {
		return nil, err
	}
	info := &profileInfo{
		Engine: b.Engine, Profile: filepath.Base(profRel), ProfileSHA256: sum, TrainedOn: from.Mode(),
		Training: b.PGO.Training, SourceVersion: from.Version, SourceSHA256: from.Source.SHA256,
		Requests: tr.Requests, Workloads: tr.Workloads, FunctionsCounted: counted, FunctionsTotal: total,
		GitSHA: gitSHA(r.Root), CreatedUTC: time.Now().UTC().Format(time.RFC3339),
		Seconds: time.Since(start).Round(100 * time.Millisecond).Seconds(),
	}
	if err := os.Rename(merged, filepath.Join(r.Root, profRel)); err != nil {
		return nil, err
	}
	if err := writeProfileInfo(filepath.Join(r.Root, infoRel), info); err != nil {
		return nil, err
	}
	keep = false
	fmt.Fprintf(r.Stderr, "%s: %s from %d .profraw, %d requests; coverage %s\n", label, profRel, nonEmpty, tr.Requests, info.coverage())
	return info, nil
}

// runTraining runs b's training suite on the instrumented build from,
// its profiles to work/raw and its run under work/results, and checks
// that the run measured the training cases.
func (t *trainer) runTraining(ctx context.Context, b, from *Build, work, label string) (*training, error) {
	r := t.Runner
	raw, results := filepath.Join(work, "raw"), filepath.Join(work, "results")
	for _, d := range []string{raw, results} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(r.Stderr, "%s: running suite %s on %s (profiles to %s)\n", label, b.PGO.Training, from.Mode(), rel(r.Root, raw))
	args := append([]string{"run", "--suite", b.PGO.Training, "--modes", from.Mode(), "--results", results,
		"--name", "train", "--no-report", "--progress", "never"}, t.RunArgs...)
	env := append(os.Environ(), "LLVM_PROFILE_FILE="+filepath.Join(raw, "%p-%m.profraw"))
	// Training takes the machine's run lock like any run: it is not a
	// measurement, but it would load the CPUs a measured run pins.
	if err := r.run(ctx, label, "training", env, t.Wafbench, args...); err != nil {
		return nil, fmt.Errorf("%w (kept %s): %w", err, rel(r.Root, work), errTraining)
	}
	runs, _ := filepath.Glob(filepath.Join(results, "*", "raw.jsonl"))
	if len(runs) != 1 {
		return nil, fmt.Errorf("%s: want one run directory with raw.jsonl under %s, found %d: %w", label, rel(r.Root, results), len(runs), errTraining)
	}
	tr, err := checkTraining(runs[0], t.Cases)
	if err != nil {
		return nil, fmt.Errorf("%s: %v (kept %s): %w", label, err, rel(r.Root, work), errTraining)
	}
	return tr, nil
}

// mergeProfiles merges the non-empty .profraw files in raw into merged
// with profdata (llvm-profdata), wanting at least one per Envoy trial; it
// returns how many it merged.
func (t *trainer) mergeProfiles(ctx context.Context, raw, merged, profdata, label string, trials int) (int, error) {
	r := t.Runner
	profraws, _ := filepath.Glob(filepath.Join(raw, "*.profraw"))
	var nonEmpty []string
	for _, p := range profraws {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
			nonEmpty = append(nonEmpty, p)
		}
	}
	if len(nonEmpty) < trials {
		return 0, fmt.Errorf("%s: %d Envoy trial(s) but %d non-empty .profraw file(s) in %s: an Envoy that is killed instead of exiting cleanly writes no profile: %w",
			label, trials, len(nonEmpty), rel(r.Root, raw), errTraining)
	}
	if err := r.run(ctx, label, "merging", os.Environ(), profdata, append([]string{"merge", "-o", merged}, nonEmpty...)...); err != nil {
		return 0, err
	}
	return len(nonEmpty), nil
}

// trainGo asks the coraza script for a Go CPU profile (the contract's
// profile action) and records its info.
func (t *trainer) trainGo(ctx context.Context, b *Build) (*profileInfo, error) {
	r := t.Runner
	start := time.Now()
	script := filepath.Join(r.Root, "scripts", "engines", b.Engine+".sh")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("build %s: no build script %s to train with", b.Mode(), rel(r.Root, script))
	}
	profRel, infoRel := b.profilePath()
	pgoDir := filepath.Join(r.Root, "build", "pgo")
	work, err := trainingDir(pgoDir, b)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	out := filepath.Join(work, filepath.Base(profRel))
	env := append(r.env(b, work, filepath.Join(r.Root, "build", "src"), nil),
		"WB_ACTION=profile", "WB_PROFILE_OUT="+out, "WB_TRAINING="+b.PGO.Training)
	copied, err := copyScript(script, work)
	if err != nil {
		return nil, err
	}
	defer os.Remove(copied)
	if err := r.run(ctx, b.Mode()+" training", "profiling", env, "bash", copied); err != nil {
		return nil, fmt.Errorf("%w: %w", err, errTraining)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Size() == 0 {
		return nil, fmt.Errorf("%s training: the script wrote no profile %s: %w", b.Mode(), out, errTraining)
	}
	sum, err := host.FileSHA256(out)
	if err != nil {
		return nil, err
	}
	info := &profileInfo{
		Engine: b.Engine, Profile: filepath.Base(profRel), ProfileSHA256: sum, TrainedOn: b.Mode(),
		Training: b.PGO.Training, SourceVersion: b.Version, GitSHA: gitSHA(r.Root),
		CreatedUTC: time.Now().UTC().Format(time.RFC3339), Seconds: time.Since(start).Round(100 * time.Millisecond).Seconds(),
	}
	if err := os.Rename(out, filepath.Join(r.Root, profRel)); err != nil {
		return nil, err
	}
	if err := writeProfileInfo(filepath.Join(r.Root, infoRel), info); err != nil {
		return nil, err
	}
	fmt.Fprintf(r.Stderr, "%s training: %s written\n", b.Mode(), profRel)
	return info, nil
}

// training is what CheckTraining found in a training run.
type training struct {
	Trials    int              // distinct Envoy trials
	Requests  int64            // requests in the measured windows
	Workloads map[string]int64 // requests per workload@conns
}

// checkTraining reads a training run's raw.jsonl and requires every case
// (workload@conns) to be there, each record without a trial error or
// request errors and with requests. A failed or partial training is an
// error naming the first problem.
func checkTraining(rawPath string, cases []string) (*training, error) {
	f, err := os.Open(rawPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := &training{Workloads: map[string]int64{}}
	trials := map[int]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		var rec result.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", rawPath, line, err)
		}
		key := rec.Workload + "@" + strconv.Itoa(rec.Conns)
		switch {
		case rec.Error != "":
			return nil, fmt.Errorf("workload %s failed: %s", key, rec.Error)
		case len(rec.Errors) > 0:
			return nil, fmt.Errorf("workload %s had errors: %s", key, formatCounts(rec.Errors))
		case rec.WarmupErrors > 0:
			return nil, fmt.Errorf("workload %s had %d errors during warmup", key, rec.WarmupErrors)
		case rec.Requests <= 0:
			return nil, fmt.Errorf("workload %s completed no requests", key)
		}
		trials[rec.Trial] = true
		tr.Requests += rec.Requests
		tr.Workloads[key] += rec.Requests
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, c := range cases {
		if _, ok := tr.Workloads[c]; !ok {
			return nil, fmt.Errorf("workload %s of the training suite did not run (partial training)", c)
		}
	}
	tr.Trials = len(trials)
	return tr, nil
}

func formatCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

// profileCoverage counts the functions of a merged clang profile that ran
// (a non-zero counter), and all functions it lists.
func profileCoverage(ctx context.Context, tool, profdata string) (counted, total int, err error) {
	out, err := execOutput(ctx, tool, "show", "--all-functions", "--counts", profdata)
	if err != nil {
		return 0, 0, fmt.Errorf("%s show: %v", tool, err)
	}
	return parseFunctionCounts(out)
}

// parseFunctionCounts reads 'llvm-profdata show --all-functions --counts':
// a function is a "  name:" line, followed by "Function count: N" (front-end
// profiles) or "Block counts: [a, b, …]" (IR profiles, entry_first = 0). A
// function counts as covered when any of its counters is non-zero.
func parseFunctionCounts(out string) (counted, total int, err error) {
	covered := false
	flush := func() {
		if covered {
			counted++
		}
		covered = false
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") && strings.HasSuffix(l, ":") {
			if total > 0 {
				flush()
			}
			total++
			continue
		}
		t := strings.TrimSpace(l)
		var nums string
		if v, ok := strings.CutPrefix(t, "Function count:"); ok {
			nums = v
		} else if v, ok := strings.CutPrefix(t, "Block counts:"); ok {
			nums = strings.Trim(strings.TrimSpace(v), "[]")
		} else {
			continue
		}
		for _, f := range strings.Split(nums, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("llvm-profdata show: %q: %v", l, err)
			}
			covered = covered || n > 0
		}
	}
	if total == 0 {
		return 0, 0, fmt.Errorf("llvm-profdata show listed no functions")
	}
	flush()
	return counted, total, nil
}

// trainingDir makes a fresh scratch directory for training b under pgoDir
// (build/pgo, created if missing); the caller removes it.
func trainingDir(pgoDir string, b *Build) (string, error) {
	if err := os.MkdirAll(pgoDir, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(pgoDir, ".train-"+b.dirName()+"-")
}
