// Package export writes a run's latencies in the formats other load tools
// read: HdrHistogram percentile distribution files (.hgrm, as HdrHistogram's
// outputPercentileDistribution and wrk2 print them) per group of records,
// and a fortio-compatible JSON result per record, which fortio's report UI
// and scripts written for fortio's output can load.
//
// Everything is rebuilt from the records' encoded histograms (result.Record
// HistBase64): the export never needs the run to be repeated.
package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"wafbench/driver/load"
	"wafbench/driver/result"
	"wafbench/internal/atomicfile"
)

// Dir is the export directory inside a run directory.
const Dir = "export"

// ticksPerHalf is the percentile resolution of an .hgrm file: the number
// of reporting steps per halving of the distance to 100%, HdrHistogram's
// customary 5.
const ticksPerHalf = 5

// writeHGRM writes h, a histogram of microseconds, as an HdrHistogram
// percentile distribution with values in milliseconds (the unit .hgrm
// plotters assume).
func writeHGRM(w io.Writer, h *hdrhistogram.Histogram) error {
	_, err := h.PercentilesPrint(w, ticksPerHalf, 1000)
	return err
}

// Fortio is the subset of fortio's HTTPRunnerResults JSON that its report
// UI and tools read. Durations in the histogram are seconds, as in fortio.
type Fortio struct {
	RunType           string            `json:"RunType"`
	Labels            string            `json:"Labels"`
	StartTime         string            `json:"StartTime,omitempty"`
	RequestedQPS      string            `json:"RequestedQPS"` // "max" for closed loop
	RequestedDuration string            `json:"RequestedDuration"`
	ActualQPS         float64           `json:"ActualQPS"`
	ActualDuration    int64             `json:"ActualDuration"` // ns
	NumThreads        int               `json:"NumThreads"`
	Version           string            `json:"Version"`
	DurationHistogram fortioHistogram   `json:"DurationHistogram"`
	Exactly           int64             `json:"Exactly"`
	RetCodes          map[string]int64  `json:"RetCodes"`
	URL               string            `json:"URL"`
	SocketCount       int               `json:"SocketCount"`
	Errors            map[string]int64  `json:"WafbenchErrors,omitempty"` // wafbench's error kinds; fortio has none
	Extra             map[string]string `json:"WafbenchRecord,omitempty"` // what names the record in raw.jsonl
}

// fortioHistogram is fortio's stats.HistogramData.
type fortioHistogram struct {
	Count       int64              `json:"Count"`
	Min         float64            `json:"Min"`
	Max         float64            `json:"Max"`
	Sum         float64            `json:"Sum"`
	Avg         float64            `json:"Avg"`
	StdDev      float64            `json:"StdDev"`
	Data        []fortioBucket     `json:"Data"`
	Percentiles []fortioPercentile `json:"Percentiles"`
}

// fortioBucket is one histogram interval [Start, End) in seconds with the
// cumulative percent of values up to its end.
type fortioBucket struct {
	Start   float64 `json:"Start"`
	End     float64 `json:"End"`
	Percent float64 `json:"Percent"`
	Count   int64   `json:"Count"`
}

// fortioPercentile is one requested percentile and its value in seconds.
type fortioPercentile struct {
	Percentile float64 `json:"Percentile"`
	Value      float64 `json:"Value"`
}

// percentiles are the percentiles a fortio result lists (fortio's -p).
var percentiles = []float64{50, 75, 90, 99, 99.9}

// fortioOf converts a histogram of microseconds and its window into a
// fortio result. conns is fortio's NumThreads and SocketCount; rate 0 is
// closed loop ("max").
func fortioOf(h *hdrhistogram.Histogram, labels, url string, conns int, rate float64, window time.Duration, statuses map[string]int64) Fortio {
	f := Fortio{RunType: "HTTP", Labels: labels, RequestedQPS: "max", RequestedDuration: window.String(),
		ActualDuration: window.Nanoseconds(), NumThreads: conns, SocketCount: conns, Version: "wafbench",
		URL: url, RetCodes: map[string]int64{}}
	if rate > 0 {
		f.RequestedQPS = strconv.FormatFloat(rate, 'f', -1, 64)
	}
	var n int64
	for k, v := range statuses {
		f.RetCodes[k] = v
		n += v
	}
	if window > 0 {
		f.ActualQPS = float64(n) / window.Seconds()
	}
	d := &f.DurationHistogram
	d.Data, d.Percentiles = []fortioBucket{}, []fortioPercentile{}
	if h == nil || h.TotalCount() == 0 {
		return f
	}
	const us = 1e6 // per second; dividing keeps decimal microseconds exact-looking
	d.Count = h.TotalCount()
	d.Min, d.Max = float64(h.Min())/us, float64(h.Max())/us
	d.Avg, d.StdDev = h.Mean()/us, h.StdDev()/us
	d.Sum = d.Avg * float64(d.Count)
	var cum int64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		cum += b.Count
		d.Data = append(d.Data, fortioBucket{Start: float64(b.From) / us, End: float64(b.To+1) / us,
			Percent: 100 * float64(cum) / float64(d.Count), Count: b.Count})
	}
	for _, p := range percentiles {
		d.Percentiles = append(d.Percentiles, fortioPercentile{Percentile: p, Value: float64(h.ValueAtQuantile(p)) / us})
	}
	return f
}

// group is the records of one mode × workload@conns (every repeat).
type group struct {
	Mode, Workload string
	Conns          int
}

// name is the group's file name stem, e.g. "coraza_json_4k_c16".
func (g group) name() string {
	return safe(g.Mode) + "_" + safe(g.Workload) + "_c" + strconv.Itoa(g.Conns)
}

// safe replaces the characters of mode and workload names that are awkward
// in file names ('@', '=', '/') with '-'.
func safe(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '@', '=', '/', ' ':
			return '-'
		}
		return r
	}, s)
}

// files lists what WriteRun writes, relative to the run directory.
type files struct {
	HGRM   []string
	Fortio []string
}

// WriteRun writes, under dir/export, one .hgrm per group (the histograms of
// every measured record of the group merged; a mix also one per class,
// named <mode>_<mix>.<class>_c<conns>.hgrm) and fortio/<record>.json per
// measured record. Records without a histogram (failed, interrupted) are
// skipped. The files of a group or record are replaced, never appended to.
func WriteRun(dir string, recs []result.Record) (files, error) {
	var files files
	groups := map[group]*hdrhistogram.Histogram{}
	type one struct {
		rec  *result.Record
		hist *hdrhistogram.Histogram
	}
	var each []one
	for i := range recs {
		r := &recs[i]
		if r.HistBase64 == "" || r.Interrupted {
			continue
		}
		h, err := load.DecodeHist(r.HistBase64)
		if err != nil {
			return files, fmt.Errorf("export: record trial %d %s %s@%d: %w", r.Trial, r.Mode, r.Workload, r.Conns, err)
		}
		g := group{r.Mode, r.Workload, r.Conns}
		if groups[g] == nil {
			groups[g] = load.NewHistogram()
		}
		groups[g].Merge(h)
		each = append(each, one{r, h})
		for _, c := range r.Classes { // a mix: one group per class too
			if c.HistBase64 == "" {
				continue
			}
			ch, err := load.DecodeHist(c.HistBase64)
			if err != nil {
				return files, fmt.Errorf("export: record trial %d %s %s@%d class %s: %w", r.Trial, r.Mode, r.Workload, r.Conns, c.Workload, err)
			}
			cg := group{r.Mode, r.Workload + "." + c.Workload, r.Conns}
			if groups[cg] == nil {
				groups[cg] = load.NewHistogram()
			}
			groups[cg].Merge(ch)
		}
	}
	if len(each) == 0 {
		return files, nil
	}
	if err := os.MkdirAll(filepath.Join(dir, Dir, "fortio"), 0o755); err != nil {
		return files, err
	}
	keys := make([]group, 0, len(groups))
	for g := range groups {
		keys = append(keys, g)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].name() < keys[j].name() })
	for _, g := range keys {
		var buf bytes.Buffer
		if err := writeHGRM(&buf, groups[g]); err != nil {
			return files, err
		}
		rel := filepath.Join(Dir, g.name()+".hgrm")
		if err := atomicfile.WriteFile(filepath.Join(dir, rel), buf.Bytes()); err != nil {
			return files, err
		}
		files.HGRM = append(files.HGRM, rel)
	}
	for _, o := range each {
		r := o.rec
		g := group{r.Mode, r.Workload, r.Conns}
		labels := fmt.Sprintf("wafbench %s %s@%d trial %d repeat %d", r.Mode, r.Workload, r.Conns, r.Trial, r.Repeat)
		f := fortioOf(o.hist, labels, "", r.Conns, r.RateRequestedPerS, time.Duration(r.DurationS*float64(time.Second)), r.Statuses)
		f.Errors = r.Errors
		f.Extra = map[string]string{"trial": strconv.Itoa(r.Trial), "repeat": strconv.Itoa(r.Repeat),
			"mode": r.Mode, "workload": r.Workload, "conns": strconv.Itoa(r.Conns)}
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return files, err
		}
		rel := filepath.Join(Dir, "fortio", fmt.Sprintf("t%02d-%s.json", r.Trial, g.name()))
		if err := atomicfile.WriteFile(filepath.Join(dir, rel), append(b, '\n')); err != nil {
			return files, err
		}
		files.Fortio = append(files.Fortio, rel)
	}
	return files, nil
}
