package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/merge"
	"wafbench/driver/plan"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// blocksFixtureDir holds four synthetic shards of one design (3 modes × 2
// workloads × 12 repeats, 3 repeats per shard) recorded on three machines
// of two CPU models: shards 0 and 1 on an Intel machine, 2 and 3 on two
// AMD machines. Made-up numbers from writeBlocksFixture, not measurements;
// go test -update rewrites them.
const blocksFixtureDir = "testdata/blocks"

// fixtureMachine is one machine of the fixture: its CPU, its passthrough
// req/s and each WAF mode's true req/s ratio to passthrough there.
type fixtureMachine struct {
	id, cpu string
	base    float64
	ratio   map[string]float64
}

var fixtureMachines = []fixtureMachine{
	{"a1a1a1a1a1a1a1a1", "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", 21000, map[string]float64{"modsecurity": 0.055, "coraza": 0.088}},
	{"b2b2b2b2b2b2b2b2", "AMD EPYC 7763 64-Core Processor", 24000, map[string]float64{"modsecurity": 0.062, "coraza": 0.085}},
	{"c3c3c3c3c3c3c3c3", "AMD EPYC 7763 64-Core Processor", 23000, map[string]float64{"modsecurity": 0.060, "coraza": 0.095}},
}

// fixtureShardMachine: the machine each of the four shards ran on.
var fixtureShardMachine = []int{0, 0, 1, 2}

func writeBlocksFixture(dir string) error {
	const shards, designRepeats = 4, 12
	modes := []string{"passthrough", "modsecurity", "coraza"}
	popts := plan.Options{Modes: modes, Cases: 2, Repeats: designRepeats, Order: plan.Latin, Seed: 1, Scope: plan.PerModeRepeat}
	all, err := plan.Build(popts)
	if err != nil {
		return err
	}
	wls := []struct {
		name  string
		conns int
		scale float64
	}{{"headers", 16, 1}, {"json_4k", 1, 0.43}}
	util := map[string]float64{"passthrough": 0.55, "modsecurity": 0.99, "coraza": 0.98}
	for i := range shards {
		sh := plan.Shard{Index: i, Count: shards}
		trials, orders, err := sh.Select(popts, all)
		if err != nil {
			return err
		}
		mc := fixtureMachines[fixtureShardMachine[i]]
		meta := syntheticMeta(fmt.Sprintf("fixture-shard%d", i), mc.cpu, fakeHash("envoy 1.40.0"))
		meta.RunID = fmt.Sprintf("%032x", 0xb10c0+i)
		meta.Machine = mc.id
		meta.StartedUTC = fmt.Sprintf("2026-11-2%dT10:00:00Z", i+1)
		meta.FinishedUTC = fmt.Sprintf("2026-11-2%dT10:30:00Z", i+1)
		meta.Suite = "blocks-fixture"
		meta.Modes, meta.Workloads = modes, []string{"headers@16", "json_4k@1"}
		meta.Repeats, meta.ModeOrder = len(sh.Repeats(designRepeats)), orders
		meta.Shard = &result.Shard{Index: i, Count: shards, DesignRepeats: designRepeats, Repeats: sh.Repeats(designRepeats)}
		meta.Flags = map[string]string{"duration": "10s", "warmup": "2s", "repeats": fmt.Sprint(designRepeats), "shard": sh.String()}
		meta.Command = []string{"wafbench", "run", "--suite", "blocks-fixture", "--repeats", "12", "--shard", sh.String()}
		meta.Notes = []string{"synthetic shard for the machine-block tests; not a measurement"}
		var recs []result.Record
		for _, tr := range trials {
			mi := map[string]int{"passthrough": 0, "modsecurity": 1, "coraza": 2}[tr.Mode]
			for wi, w := range wls {
				jit := 1 + 0.01*float64((tr.Repeat*7+mi*3+wi*5)%5-2)
				r := 1.0
				if tr.Mode != "passthrough" {
					r = mc.ratio[tr.Mode]
				}
				rps := round(mc.base*w.scale*r*jit, 1)
				cpuUs := util[tr.Mode] * 1e6 / rps
				lat := float64(w.conns) / rps * 1e6
				per := make([]int64, 10)
				for s := range per {
					per[s] = int64(math.Round(rps * (1 + 0.004*float64((s*3+tr.Repeat)%3-1))))
				}
				recs = append(recs, result.Record{
					Case: result.Case{
						Trial: tr.Index, Repeat: tr.Repeat, Position: tr.Position, Mode: tr.Mode, Workload: w.name,
						Conns: w.conns, Load: "closed", Shard: sh.String(),
					},
					Window: result.Window{
						RateAchievedPerS: rps, WarmupS: 2, DurationS: 10, ExpectStatus: 200,
						Requests: int64(math.Round(rps * 10)),
						Statuses: map[string]int64{"200": int64(math.Round(rps * 10))}, ReqPerS: rps,
						Latency: result.Latency{P50Us: round(lat*0.92, 1), P90Us: round(lat*1.4, 1), P95Us: round(lat*1.7, 1),
							P99Us: round(lat*2.6, 1), P999Us: round(lat*4.1, 1), MaxUs: round(lat*9.5, 1), MeanUs: round(lat, 1)},
						PerSecond: per,
					},
					CPU: result.CPU{SchedstatNs: int64(cpuUs * rps * 10 * 1000), UsPerRequest: round(cpuUs, 3), Utilization: util[tr.Mode]},
				})
			}
		}
		if err := writeRun(filepath.Join(dir, fmt.Sprintf("shard%d", i)), meta, recs); err != nil {
			return err
		}
	}
	return nil
}

func fixtureShards(t *testing.T, idx ...int) []string {
	t.Helper()
	var dirs []string
	for _, i := range idx {
		d := filepath.Join(blocksFixtureDir, fmt.Sprintf("shard%d", i))
		if _, err := os.Stat(filepath.Join(d, result.RawFile)); err != nil {
			t.Fatalf("%v (run go test ./driver/report -update to create it)", err)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// TestBlocksFixtureCommitted keeps testdata/blocks equal to its generator.
func TestBlocksFixtureCommitted(t *testing.T) {
	if *update {
		os.RemoveAll(blocksFixtureDir)
		if err := writeBlocksFixture(blocksFixtureDir); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := writeBlocksFixture(dir); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		for _, name := range []string{result.MetaFile, result.RawFile} {
			rel := filepath.Join(fmt.Sprintf("shard%d", i), name)
			got := readFile(t, filepath.Join(blocksFixtureDir, rel))
			want := readFile(t, filepath.Join(dir, rel))
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from its generator (go test ./driver/report -update)", rel)
			}
		}
	}
}

// TestMergeBlocksFixture: the four shards from two CPU models merge with
// --blocks into three machine blocks and one whole design; every paired
// ratio is analysed per machine and pooled with the machine as a random
// effect. The block section is compared with a golden file.
func TestMergeBlocksFixture(t *testing.T) {
	out := filepath.Join(t.TempDir(), "merged")
	if err := mergeRuns(fixtureShards(t, 0, 1, 2, 3), out, merge.Options{Blocks: true}); err != nil {
		t.Fatal(err)
	}
	meta, err := result.ReadMeta(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Blocks) != 3 {
		t.Fatalf("blocks: got %+v, want 3 machines", meta.Blocks)
	}
	wantReps := [][]int{{1, 2, 3, 4, 5, 6}, {7, 8, 9}, {10, 11, 12}}
	for i, b := range meta.Blocks {
		if b.Machine != fixtureMachines[i].id || b.CPUModel != fixtureMachines[i].cpu || fmt.Sprint(b.Repeats) != fmt.Sprint(wantReps[i]) {
			t.Errorf("block %d: got %+v, want machine %s (%s) with repeats %v", i, b, fixtureMachines[i].id, fixtureMachines[i].cpu, wantReps[i])
		}
	}
	if s := meta.Shards; s == nil || s.Count != 4 || len(s.Present) != 4 || len(s.Missing) != 0 || meta.Repeats != 12 || len(meta.ModeOrder) != 12 {
		t.Errorf("shards: got %+v, repeats %d, %d mode orders; want 4 of 4 shards, 12 repeats", meta.Shards, meta.Repeats, len(meta.ModeOrder))
	}
	recs, _, err := result.ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	bcs := stats.AnalyseBlocks(stats.Summarize(recs), [][]int{wantReps[0], wantReps[1], wantReps[2]})
	found := false
	for _, c := range bcs {
		if c.Workload != "headers" || c.Num != "modsecurity" || c.Den != "passthrough" || c.Metric != stats.MetricReqPerS {
			continue
		}
		found = true
		for k, br := range c.Blocks {
			if want := fixtureMachines[k].ratio["modsecurity"]; math.Abs(br.Geo/want-1) > 0.02 {
				t.Errorf("machine %d ratio: got %.4f, want %.4f ± 2%%", k, br.Geo, want)
			}
		}
		if !(c.Tau2 > 0) || c.Model != "random effects" || c.DF < 1.5 || c.DF > 3.5 {
			t.Errorf("model: got %s τ²=%v df=%v, want random effects with τ² > 0 and df near k−1 = 2", c.Model, c.Tau2, c.DF)
		}
		if !(c.Lo < 0.055 && c.Hi > 0.062) {
			t.Errorf("pooled interval [%.4f, %.4f] does not cover the machines' ratios 0.055–0.062", c.Lo, c.Hi)
		}
	}
	if !found {
		t.Fatalf("no modsecurity/passthrough req/s comparison on headers in %d block comparisons", len(bcs))
	}
	report := string(readFile(t, filepath.Join(out, ReportFile)))
	got := sectionOf(report, "Machines as blocks") + sectionOf(report, "Shards")
	golden := filepath.Join(goldenDir, "blocks-section.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := string(readFile(t, golden)); got != want {
		t.Errorf("block and shard sections differ from %s (go test ./driver/report -update); got:\n%s", golden, got)
	}
}

// TestMergeShardsRefusals: two CPU models without --blocks, shards of
// different designs (every difference named in one line), and one shard
// given twice are refused; a missing shard is named in the report.
func TestMergeShardsRefusals(t *testing.T) {
	copyShard := func(t *testing.T, i int) string {
		t.Helper()
		dst := filepath.Join(t.TempDir(), fmt.Sprintf("shard%d", i))
		os.MkdirAll(dst, 0o755)
		for _, name := range []string{result.MetaFile, result.RawFile} {
			if err := os.WriteFile(filepath.Join(dst, name), readFile(t, filepath.Join(fixtureShards(t, i)[0], name)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dst
	}
	tests := []struct {
		name   string
		dirs   func(t *testing.T) []string
		blocks bool
		want   []string // all in the one-line error; nil = merged
	}{
		{"two CPU models without --blocks", func(t *testing.T) []string { return fixtureShards(t, 1, 2) }, false,
			[]string{"cpu_model differs", "--blocks"}},
		{"different suite, build and CRS", func(t *testing.T) []string {
			a, b := copyShard(t, 0), copyShard(t, 1)
			setMeta(t, b, func(m *result.Meta) {
				m.Suite = "seed"
				m.CRS.SHA256 = fakeHash("another crs")
				mod := m.Modules["coraza"]
				mod.BuildName = "coraza@re2"
				m.Modules["coraza"] = mod
			})
			return []string{a, b}
		}, true, []string{"suite differs", "crs.sha256 differs", "build of coraza differs"}},
		{"one shard twice", func(t *testing.T) []string {
			a, b := copyShard(t, 1), copyShard(t, 1)
			setMeta(t, b, func(m *result.Meta) { m.RunID = result.NewRunID(); m.Name = "again" })
			return []string{a, b}
		}, true, []string{"shard 1/4 given twice"}},
		{"one run twice", func(t *testing.T) []string { return []string{copyShard(t, 1), copyShard(t, 1)} }, true,
			[]string{"twice"}},
		{"shards of different counts", func(t *testing.T) []string {
			a, b := copyShard(t, 0), copyShard(t, 3)
			setMeta(t, b, func(m *result.Meta) { m.Shard.Count = 5 })
			return []string{a, b}
		}, true, []string{"shards differs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mergeRuns(tt.dirs(t), filepath.Join(t.TempDir(), "merged"), merge.Options{Blocks: tt.blocks})
			if err == nil {
				t.Fatalf("got no error, want a refusal containing %q", tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
		})
	}
	t.Run("missing shard", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "merged")
		if err := mergeRuns(fixtureShards(t, 0, 1, 3), out, merge.Options{Blocks: true}); err != nil {
			t.Fatal(err)
		}
		report := string(readFile(t, filepath.Join(out, ReportFile)))
		for _, w := range []string{"**3 of 4 shards**", "Missing: shard 2/4", "design repeats 1–6, 10–12"} {
			if !strings.Contains(report, w) {
				t.Errorf("report lacks %q:\n%s", w, sectionOf(report, "Shards"))
			}
		}
	})
	t.Run("one shard alone", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "merged")
		if err := mergeRuns(fixtureShards(t, 2), out, merge.Options{Blocks: true}); err != nil {
			t.Fatal(err)
		}
		report := string(readFile(t, filepath.Join(out, ReportFile)))
		if !strings.Contains(report, "**1 of 4 shards**") || !strings.Contains(report, "Missing: shard 0/4, 1/4, 3/4") {
			t.Errorf("report of one shard merged alone:\n%s", sectionOf(report, "Shards"))
		}
		// One directory that is not a shard is not a merge.
		if err := mergeRuns([]string{syntheticRunDir}, filepath.Join(t.TempDir(), "m"), merge.Options{}); err == nil {
			t.Errorf("merge of one unsharded run: got no error")
		}
	})
	t.Run("same machine keeps the pooled analysis", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "merged")
		if err := mergeRuns(fixtureShards(t, 0, 1), out, merge.Options{}); err != nil {
			t.Fatal(err)
		}
		meta, _ := result.ReadMeta(out)
		report := string(readFile(t, filepath.Join(out, ReportFile)))
		if meta.Blocks != nil || strings.Contains(report, "## Machines as blocks") || meta.Machine != fixtureMachines[0].id {
			t.Errorf("merge of one machine's shards without --blocks: got blocks %v, machine %q; want no block analysis, machine kept", meta.Blocks, meta.Machine)
		}
	})
}
