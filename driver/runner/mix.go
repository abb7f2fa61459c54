package runner

import (
	"strconv"

	"wafbench/driver/load"
	"wafbench/driver/result"
)

// fillClasses copies a mix window's per-class results into rec.
func fillClasses(rec *result.Record, res *load.Result) {
	for _, c := range res.Classes {
		rc := result.Class{Workload: c.Name, Weight: c.Weight, ExpectStatus: c.ExpectStatus, Requests: c.Requests}
		if len(c.Errors) > 0 {
			rc.Errors = c.Errors
		}
		if len(c.Statuses) > 0 {
			rc.Statuses = map[string]int64{}
			for k, v := range c.Statuses {
				rc.Statuses[strconv.Itoa(k)] = v
			}
		}
		if h := c.Hist; h != nil && h.TotalCount() > 0 {
			rc.Latency = result.Latency{
				P50Us: float64(h.ValueAtQuantile(50)), P90Us: float64(h.ValueAtQuantile(90)),
				P95Us: float64(h.ValueAtQuantile(95)), P99Us: float64(h.ValueAtQuantile(99)),
				P999Us: float64(h.ValueAtQuantile(99.9)), MaxUs: float64(h.Max()), MeanUs: h.Mean(),
			}
			r := load.Result{Hist: h}
			if s, err := r.EncodeHist(); err == nil {
				rc.HistBase64 = s
			}
		}
		rec.Classes = append(rec.Classes, rc)
	}
}
