package report

import (
	"io"
	"math"
	"sort"
	"strings"

	"golang.org/x/perf/benchfmt"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// Units written to bench.txt besides ns/op, with their direction.
const (
	unitReqPerS = "req/s"
	unitCPU     = "cpu-µs/op"
	unitP99     = "p99-µs"
)

// benchName is the benchfmt name of a record without the "Benchmark"
// prefix, e.g. "WAF/mode=coraza/workload=headers/conns=16", so benchstat
// can group by /mode, /workload and /conns.
func benchName(r *result.Record) string {
	return "WAF/mode=" + r.Mode + "/workload=" + r.Workload + "/conns=" + itoa(r.Conns)
}

// goarch maps the machine field of the recorded kernel string to GOARCH.
// result.Meta records no architecture of its own.
func goarch(kernel string) string {
	switch {
	case strings.Contains(kernel, "x86_64"):
		return "amd64"
	case strings.Contains(kernel, "aarch64"):
		return "arm64"
	}
	return ""
}

func benchConfig(meta *result.Meta) []benchfmt.Config {
	var cfg []benchfmt.Config
	add := func(k, v string) {
		if v != "" {
			cfg = append(cfg, benchfmt.Config{Key: k, Value: []byte(v), File: true})
		}
	}
	add("goos", "linux")
	add("goarch", goarch(meta.Kernel))
	add("cpu", meta.CPUModel)
	add("run", meta.Name)
	add("git", meta.GitSHA)
	add("envoy", meta.EnvoyVersion)
	add("envoy-sha256", meta.EnvoySHA256)
	if meta.CRS != nil {
		add("crs", meta.CRS.Version)
		add("crs-sha256", meta.CRS.SHA256)
	}
	var modes []string
	for m := range meta.Modules {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	for _, m := range modes {
		mod := meta.Modules[m]
		add(m, strings.TrimSpace(mod.Engine+" "+mod.EngineVersion))
		add(m+"-sha256", mod.SHA256)
	}
	return cfg
}

func round(v float64, decimals int) float64 {
	p := math.Pow10(decimals)
	return math.Round(v*p) / p
}

// writeBench writes one benchfmt line per valid record (interrupted and
// failed trials are left out), preceded by unit metadata and the run's
// file configuration:
//
//	BenchmarkWAF/mode=coraza/workload=headers/conns=16 <requests> <ns/op> ns/op <req/s> req/s <cpu-µs> cpu-µs/op <p99> p99-µs
//
// ns/op is 1e9 / req/s: wall time per completed request at the achieved
// throughput, not per-request latency.
func writeBench(w io.Writer, meta *result.Meta, recs []result.Record) error {
	bw := benchfmt.NewWriter(w)
	for _, u := range []struct{ unit, better string }{
		{"ns/op", "lower"}, {unitReqPerS, "higher"}, {unitCPU, "lower"}, {unitP99, "lower"},
	} {
		md := &benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u.unit, Key: "better"}, OrigUnit: u.unit, Value: u.better}
		if err := bw.Write(md); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	cfg := benchConfig(meta)
	for i := range recs {
		r := &recs[i]
		if !stats.Valid(r) || r.ReqPerS <= 0 {
			continue
		}
		res := &benchfmt.Result{
			Config: cfg,
			Name:   benchfmt.Name(benchName(r)),
			Iters:  int(r.Requests),
			Values: []benchfmt.Value{
				{Value: round(1e9/r.ReqPerS, 1), Unit: "ns/op"},
				{Value: round(r.ReqPerS, 2), Unit: unitReqPerS},
				{Value: round(r.CPU.UsPerRequest, 3), Unit: unitCPU},
				{Value: round(r.Latency.P99Us, 1), Unit: unitP99},
			},
		}
		if err := bw.Write(res); err != nil {
			return err
		}
	}
	return nil
}
