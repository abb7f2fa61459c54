package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"wafbench/driver/result"
)

// syntheticRunDir is the committed synthetic run: 3 modes × 2 workloads × 5
// repeats, deterministic made-up numbers from writeSyntheticRun. The test
// TestSyntheticRunCommitted keeps the files equal to the generator's
// output; go test -update rewrites them.
const syntheticRunDir = "testdata/run"

func fakeHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// syntheticMeta is the meta.json of the synthetic run. cpuModel and
// envoyHash let merge tests make incompatible environments.
func syntheticMeta(name, cpuModel, envoyHash string) *result.Meta {
	return &result.Meta{
		Name: name, StartedUTC: "2026-11-20T10:00:00Z", FinishedUTC: "2026-11-20T10:20:00Z", Status: "complete",
		Command: []string{"wafbench", "run", "--suite", "synthetic", "--repeats", "5"},
		Flags:   map[string]string{"duration": "10s", "warmup": "2s", "repeats": "5"},
		Suite:   "synthetic", Modes: []string{"passthrough", "modsecurity", "coraza"},
		Workloads: []string{"headers", "json_4k"}, Repeats: 5, Order: "latin", Seed: 1,
		ModeOrder: [][]string{
			{"passthrough", "modsecurity", "coraza"}, {"coraza", "passthrough", "modsecurity"},
			{"modsecurity", "coraza", "passthrough"}, {"passthrough", "modsecurity", "coraza"},
			{"coraza", "passthrough", "modsecurity"},
		},
		TrialScope: "per-mode-repeat",
		GitSHA:     "0123456789abcdef0123456789abcdef01234567", GoVersion: "go1.26.8",
		Kernel: "Linux 6.1.0-40-amd64 x86_64", CPUModel: cpuModel, NumCPU: 2, Governor: "performance", SMT: "off",
		EnvoyPath: "/opt/envoy/bin/envoy", EnvoyVersion: "1.40.0", EnvoySHA256: envoyHash, Concurrency: 1,
		EnvoyCPUs: []int{0}, ClientCPUs: []int{1}, UpstreamCPUs: []int{1},
		Modules: map[string]result.Module{
			"modsecurity": {Path: "modules/libmodsecurity_waf.so", SHA256: fakeHash("modsecurity module"), Engine: "libmodsecurity", EngineVersion: "3.0.9", Build: "clang -O2"},
			"coraza":      {Path: "modules/libcoraza_waf.so", SHA256: fakeHash("coraza module"), Engine: "coraza", EngineVersion: "v3.8.1", Build: "go1.26.8 -buildmode=c-shared"},
		},
		CRS: &result.CRS{Version: "4.25.0", Dir: "crs", SHA256: fakeHash("crs 4.25.0"), RuleFiles: 27,
			Files:       map[string]string{"REQUEST-901-INITIALIZATION.conf": fakeHash("901")},
			Adaptations: []string{`REQUEST-949, RESPONSE-959: chained SecRule TX:EARLY_BLOCKING "@eq 1" given "t:none"`}},
		Notes: []string{"synthetic data for golden tests; not a measurement"},
	}
}

// syntheticRecords makes the records: req/s per (workload, mode) times a
// fixed ±2 % pattern over repeat and mode; CPU and latency follow from
// req/s. Coraza headers in repeat 2 drifts upward (about +7 %) so the steady-state
// check has one flag.
func syntheticRecords() []result.Record {
	type wl struct {
		name  string
		conns int
		base  map[string]float64
	}
	wls := []wl{
		{"headers", 16, map[string]float64{"passthrough": 21000, "modsecurity": 1150, "coraza": 1850}},
		{"json_4k", 1, map[string]float64{"passthrough": 9000, "modsecurity": 610, "coraza": 1020}},
	}
	util := map[string]float64{"passthrough": 0.55, "modsecurity": 0.99, "coraza": 0.98}
	rss := map[string]int64{"passthrough": 41000, "modsecurity": 126000, "coraza": 93000}
	meta := syntheticMeta("synthetic", "", "")
	var out []result.Record
	trial := 0
	for rep := 1; rep <= 5; rep++ {
		for pos, mode := range meta.ModeOrder[rep-1] {
			trial++
			mi := map[string]int{"passthrough": 0, "modsecurity": 1, "coraza": 2}[mode]
			for wi, w := range wls {
				jit := 1 + 0.01*float64((rep*7+mi*3+wi*5)%5-2)
				rps := w.base[mode] * jit
				tail := 1 + 0.015*(float64((rep*3+mi*5+wi)%4)-1.5) // p99 varies on its own
				per := make([]int64, 10)
				for s := range per {
					v := rps * (1 + 0.004*float64((s*3+rep)%3-1))
					if mode == "coraza" && w.name == "headers" && rep == 2 {
						v = rps * (0.94 + 0.12*float64(s)/9)
					}
					per[s] = int64(math.Round(v))
				}
				cpuUs := util[mode] * 1e6 / rps
				lat := float64(w.conns) / rps * 1e6
				r := result.Record{
					Case: result.Case{
						Trial: trial, Repeat: rep, Position: pos + 1, Mode: mode, Workload: w.name, Conns: w.conns,
						Load: "closed",
					},
					Window: result.Window{
						RateAchievedPerS: rps, WarmupS: 2, DurationS: 10, ExpectStatus: 200,
						Requests: int64(math.Round(rps * 10)),
						Statuses: map[string]int64{"200": int64(math.Round(rps * 10))}, ReqPerS: rps,
						Latency: result.Latency{P50Us: round(lat*0.92, 1), P90Us: round(lat*1.4, 1), P95Us: round(lat*1.7, 1),
							P99Us: round(lat*2.6*tail, 1), P999Us: round(lat*4.1, 1), MaxUs: round(lat*9.5, 1), MeanUs: round(lat, 1)},
						PerSecond: per,
					},
					CPU: result.CPU{SchedstatNs: int64(cpuUs * rps * 10 * 1000), TicksNs: int64(math.Round(util[mode]*10*100)) * 10_000_000,
						UsPerRequest: round(cpuUs, 3), Utilization: util[mode]},
					Memory:   result.Memory{RSSAfterWarmupKiB: rss[mode] - 500, RSSEndKiB: rss[mode] + int64(rep*64), PeakKiB: rss[mode] + 1024},
					Affinity: []result.ThreadAffinity{{Process: "envoy", TID: 1000 + trial, Name: "envoy", CPUs: []int{0}, When: "end"}},
				}
				if wi == 0 {
					r.Startup = &result.Startup{AdminReadyMs: 180 + float64(mi*40), ListenerReadyMs: 210 + float64(mi*40)}
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// writeRun writes meta and recs as a run directory.
func writeRun(dir string, meta *result.Meta, recs []result.Record) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := result.WriteMeta(dir, meta); err != nil {
		return err
	}
	var b []byte
	for i := range recs {
		line, err := json.Marshal(&recs[i])
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	return os.WriteFile(filepath.Join(dir, result.RawFile), b, 0o644)
}

func writeSyntheticRun(dir string) error {
	meta := syntheticMeta("synthetic", "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", fakeHash("envoy 1.40.0"))
	if err := writeRun(dir, meta, syntheticRecords()); err != nil {
		return fmt.Errorf("synthetic run: %w", err)
	}
	return nil
}
