package report

import (
	"encoding/json"
	"io"
	"math"
	"strconv"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// summarySchema names the layout of summary.json.
const summarySchema = "wafbench.summary/v1"

// num is a float64 written with 10 significant digits; NaN and ±Inf (an
// interval too wide to state) are written as null.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	v := float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	if v == 0 {
		return []byte("0"), nil // no "-0"
	}
	return strconv.AppendFloat(nil, v, 'g', 10, 64), nil
}

func nums(v []float64) []num {
	out := make([]num, len(v))
	for i, x := range v {
		out[i] = num(x)
	}
	return out
}

type estimateJSON struct {
	Median       num `json:"median"`
	CILo         num `json:"ci_lo"`
	CIHi         num `json:"ci_hi"`
	CIConfidence num `json:"ci_confidence"`
	HalfWidthPct num `json:"ci_half_width_pct"`
}

func est(e stats.Estimate) estimateJSON {
	return estimateJSON{num(e.Median), num(e.Lo), num(e.Hi), num(e.Confidence), num(e.HalfWidthPct())}
}

type groupJSON struct {
	Mode         string       `json:"mode"`
	Workload     string       `json:"workload"`
	Conns        int          `json:"conns"`
	N            int          `json:"n"`
	Errors       int64        `json:"errors"`
	ReqPerS      estimateJSON `json:"req_per_s"`
	CPUUsPerReq  estimateJSON `json:"envoy_cpu_us_per_req"`
	P50Us        estimateJSON `json:"latency_p50_us"`
	P95Us        estimateJSON `json:"latency_p95_us"`
	P99Us        estimateJSON `json:"latency_p99_us"`
	P999Us       estimateJSON `json:"latency_p999_us"`
	MaxUs        estimateJSON `json:"latency_max_us"`
	RSSEndKiB    estimateJSON `json:"envoy_rss_end_kib"`
	ReqPrecision bool         `json:"req_per_s_precision_met"`
	CPUPrecision bool         `json:"cpu_precision_met"`
}

type comparisonJSON struct {
	Workload    string `json:"workload"`
	Conns       int    `json:"conns"`
	Num         string `json:"numerator"`
	Den         string `json:"denominator"`
	Metric      string `json:"metric"`
	N           int    `json:"n"`
	Repeats     []int  `json:"repeats"`
	NumValues   []num  `json:"numerator_values"`
	DenValues   []num  `json:"denominator_values"`
	Ratios      []num  `json:"ratios"`
	MedianRatio num    `json:"median_ratio"`
	BootLo      num    `json:"bootstrap_ci_lo"`
	BootHi      num    `json:"bootstrap_ci_hi"`
	OrderLo     num    `json:"order_ci_lo"`
	OrderHi     num    `json:"order_ci_hi"`
	GeoRatio    num    `json:"geomean_ratio"`
	TLo         num    `json:"paired_t_ci_lo"`
	THi         num    `json:"paired_t_ci_hi"`
	P           num    `json:"p_paired_t"`
	PMW         num    `json:"p_mann_whitney"`
	PHolm       num    `json:"p_holm"`
	Family      string `json:"holm_family,omitempty"`
	PSignedRank num    `json:"p_signed_rank"`
	Checks      string `json:"assumption_flags,omitempty"`
	Verdict     string `json:"verdict"`
	Reason      string `json:"reason,omitempty"`
}

type baselineJSON struct {
	Workload string       `json:"workload"`
	Conns    int          `json:"conns"`
	Mode     string       `json:"mode"`
	Repeats  []int        `json:"repeats"`
	ValuesUs []num        `json:"added_cpu_us_per_req"`
	Median   estimateJSON `json:"median_added_cpu_us_per_req"`
	BootLo   num          `json:"bootstrap_ci_lo"`
	BootHi   num          `json:"bootstrap_ci_hi"`
}

type growthJSON struct {
	Trial           int    `json:"trial"`
	Repeat          int    `json:"repeat"`
	Mode            string `json:"mode"`
	Workload        string `json:"workload"`
	Conns           int    `json:"conns"`
	Requests        int64  `json:"requests"`
	BeforeKiB       int64  `json:"rss_after_warmup_kib"`
	AfterKiB        int64  `json:"rss_end_kib"`
	BytesPerRequest num    `json:"growth_bytes_per_request"`
	Flagged         bool   `json:"flagged"`
}

type driftJSON struct {
	Trial      int    `json:"trial"`
	Repeat     int    `json:"repeat"`
	Mode       string `json:"mode"`
	Workload   string `json:"workload"`
	Conns      int    `json:"conns"`
	Seconds    int    `json:"seconds_used"`
	FirstMean  num    `json:"first_half_req_per_s"`
	SecondMean num    `json:"second_half_req_per_s"`
	ChangePct  num    `json:"change_pct"`
	Flagged    bool   `json:"flagged"`
	TooShort   bool   `json:"too_short,omitempty"`
}

type excludedJSON struct {
	Trial    int    `json:"trial"`
	Repeat   int    `json:"repeat"`
	Mode     string `json:"mode"`
	Workload string `json:"workload"`
	Conns    int    `json:"conns"`
	Reason   string `json:"reason"`
}

type methodJSON struct {
	Confidence         num    `json:"confidence"`
	Alpha              num    `json:"alpha"`
	MinSamplesPerSide  int    `json:"min_samples_per_side"`
	BootstrapSeed      int    `json:"bootstrap_seed"`
	BootstrapResamples int    `json:"bootstrap_resamples"`
	DriftLimitPct      num    `json:"drift_limit_pct"`
	PrecisionTargetPct num    `json:"precision_target_pct"`
	HolmFamilySize     int    `json:"holm_family_size"`
	Center             string `json:"center"`
	Interval           string `json:"interval"`
	Test               string `json:"test"`
}

type summaryJSON struct {
	Schema      string           `json:"schema"`
	Meta        *result.Meta     `json:"meta"`
	Method      methodJSON       `json:"method"`
	Groups      []groupJSON      `json:"groups"`
	Comparisons []comparisonJSON `json:"comparisons"`
	BaselineCPU []baselineJSON   `json:"baseline_adjusted_cpu"`
	SteadyState []driftJSON      `json:"steady_state"`
	Memory      []growthJSON     `json:"memory_growth"`
	Excluded    []excludedJSON   `json:"excluded"`
	Overhead    *overheadJSON    `json:"integration_overhead,omitempty"` // only with engine-bench.txt

	PartialDropped int          `json:"partial_records_dropped,omitempty"` // torn last lines of raw.jsonl
	BehindRate     []behindJSON `json:"open_loop_behind_rate,omitempty"`   // windows that did not hold their rate
}

type behindJSON struct {
	Trial     int    `json:"trial"`
	Repeat    int    `json:"repeat"`
	Mode      string `json:"mode"`
	Workload  string `json:"workload"`
	Conns     int    `json:"conns"`
	Requested num    `json:"rate_requested_per_s"`
	Achieved  num    `json:"rate_achieved_per_s"`
	Late      int64  `json:"late"`
}

// writeSummary writes the normalized summary as indented JSON. Units are in
// field names; key order follows the struct layout (maps in meta are
// sorted by encoding/json); floats have 10 significant digits and an
// unbounded interval is null.
func writeSummary(w io.Writer, fig *figures) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(buildSummaryJSON(fig))
}

// buildSummaryJSON is summary.json's content: the run's figures in their
// JSON form.
func buildSummaryJSON(fig *figures) summaryJSON {
	meta, s, ov, q := fig.Meta, fig.Summary, fig.Overhead, fig.Quality
	out := summaryJSON{
		Schema: summarySchema,
		Meta:   meta,
		Method: methodJSON{
			Confidence: stats.Confidence, Alpha: stats.Alpha, MinSamplesPerSide: stats.MinSamples,
			BootstrapSeed: stats.BootstrapSeed, BootstrapResamples: stats.BootstrapResamples,
			DriftLimitPct: 100 * stats.DriftLimit, PrecisionTargetPct: stats.PrecisionTargetPct,
			HolmFamilySize: len(s.Comparisons), // all families together; each comparison names its own
			Center:         "median over repeats",
			Interval:       "order-statistic CI of the median (x/perf benchmath AssumeNothing); ratios also seeded percentile bootstrap",
			Test:           "two-sided paired t of per-repeat log-ratios, Holm-adjusted within each question's family; exact Wilcoxon signed-rank and Mann-Whitney U beside it",
		},
		Groups:      []groupJSON{},
		Comparisons: []comparisonJSON{},
		BaselineCPU: []baselineJSON{},
		SteadyState: []driftJSON{},
		Excluded:    []excludedJSON{},
		Overhead:    overheadSummary(ov),

		PartialDropped: q.PartialDropped,
	}
	for _, r := range q.Behind {
		out.BehindRate = append(out.BehindRate, behindJSON{r.Trial, r.Repeat, r.Mode, r.Workload, r.Conns,
			num(r.RateRequestedPerS), num(r.RateAchievedPerS), r.Late})
	}
	for _, g := range s.Groups {
		out.Groups = append(out.Groups, groupJSON{
			Mode: g.Mode, Workload: g.Workload, Conns: g.Conns, N: g.N, Errors: g.Errors,
			ReqPerS: est(g.ReqPerS), CPUUsPerReq: est(g.CPUUsPerReq),
			P50Us: est(g.P50Us), P95Us: est(g.P95Us), P99Us: est(g.P99Us), P999Us: est(g.P999Us), MaxUs: est(g.MaxUs),
			RSSEndKiB:    est(g.RSSEndKiB),
			ReqPrecision: g.ReqPerS.PrecisionMet(), CPUPrecision: g.CPUUsPerReq.PrecisionMet(),
		})
	}
	// A run of one repeat has one ratio per comparison and no interval,
	// test or verdict (the report says so once): the ratio is the groups'
	// medians divided, so its comparisons are left out (an 11-mode
	// adversarial run's were 1.8 of its 4 MB).
	if oneRepeat(s) {
		out.Method.HolmFamilySize = 0
	} else {
		out.Comparisons = append(out.Comparisons, comparisonsJSON(s.Comparisons)...)
	}
	addSeriesJSON(&out, s)
	return out
}

func comparisonsJSON(cs []stats.Comparison) []comparisonJSON {
	var out []comparisonJSON
	for _, c := range cs {
		out = append(out, comparisonJSON{
			Workload: c.Workload, Conns: c.Conns, Num: c.Num, Den: c.Den, Metric: string(c.Metric), N: c.N(),
			Repeats: c.Repeats, NumValues: nums(c.NumValues), DenValues: nums(c.DenValues), Ratios: nums(c.Ratios),
			MedianRatio: num(c.MedianRatio), BootLo: num(c.BootLo), BootHi: num(c.BootHi),
			OrderLo: num(c.OrderLo), OrderHi: num(c.OrderHi), GeoRatio: num(c.GeoRatio), TLo: num(c.TLo), THi: num(c.THi),
			P: num(c.P), PMW: num(c.PMannWhitney), PHolm: num(c.PHolm),
			Family: string(c.Family), PSignedRank: num(c.PSignedRank), Checks: c.Assumptions.String(),
			Verdict: c.Verdict, Reason: c.Reason,
		})
	}
	return out
}

// addSeriesJSON adds the summary's baseline CPU, steady-state, memory and
// exclusion lists.
func addSeriesJSON(out *summaryJSON, s *stats.Summary) {
	for _, b := range s.Baseline {
		out.BaselineCPU = append(out.BaselineCPU, baselineJSON{
			Workload: b.Workload, Conns: b.Conns, Mode: b.Mode, Repeats: b.Repeats, ValuesUs: nums(b.Values),
			Median: est(b.Median), BootLo: num(b.BootLo), BootHi: num(b.BootHi),
		})
	}
	for _, d := range s.Drift {
		out.SteadyState = append(out.SteadyState, driftJSON{
			Trial: d.Trial, Repeat: d.Repeat, Mode: d.Mode, Workload: d.Workload, Conns: d.Conns, Seconds: d.Seconds,
			FirstMean: num(d.FirstMean), SecondMean: num(d.SecondMean), ChangePct: num(100 * d.Change),
			Flagged: d.Flagged, TooShort: d.TooShort,
		})
	}
	for _, g := range s.Growth {
		out.Memory = append(out.Memory, growthJSON{g.Trial, g.Repeat, g.Mode, g.Workload, g.Conns, g.Requests,
			g.BeforeKiB, g.AfterKiB, num(g.BytesPerRequest), g.Flagged})
	}
	for _, e := range s.Excluded {
		out.Excluded = append(out.Excluded, excludedJSON{e.Trial, e.Repeat, e.Mode, e.Workload, e.Conns, e.Reason})
	}
}
