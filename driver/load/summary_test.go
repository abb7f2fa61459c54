package load

import (
	"encoding/json"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestSummarize(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for v := int64(1); v <= 100; v++ {
		_ = h.RecordValue(v)
	}
	tests := []struct {
		name     string
		res      Result
		wantLoad string
		behind   bool
	}{
		{name: "closed", res: Result{Requests: 100, Statuses: map[int]int64{200: 100}, Elapsed: time.Second, Hist: h},
			wantLoad: "closed"},
		{name: "open on rate", res: Result{Requests: 100, Statuses: map[int]int64{200: 100}, Elapsed: time.Second, Hist: h,
			RateRequested: 100, RateAchieved: 100, Due: 100}, wantLoad: "open"},
		{name: "open behind", res: Result{Requests: 50, Statuses: map[int]int64{200: 50, 403: 10}, Elapsed: time.Second,
			RateRequested: 100, RateAchieved: 60, Due: 100}, wantLoad: "open", behind: true},
		{name: "open late but not lagged", res: Result{Requests: 100, Statuses: map[int]int64{200: 100}, Elapsed: time.Second,
			RateRequested: 100, RateAchieved: 100, Due: 100, Late: 40, Lagged: 1}, wantLoad: "open"},
		{name: "open lagged, not stalled", res: Result{Requests: 100, Statuses: map[int]int64{200: 100}, Elapsed: time.Second,
			RateRequested: 100, RateAchieved: 100, Due: 100, Late: 40, Lagged: 40, Stalled: 1}, wantLoad: "open"},
		{name: "open stalled", res: Result{Requests: 100, Statuses: map[int]int64{200: 100}, Elapsed: time.Second,
			RateRequested: 100, RateAchieved: 100, Due: 100, Late: 40, Lagged: 5, Stalled: 5}, wantLoad: "open", behind: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.res.Summarize("http://127.0.0.1:1/", 4)
			if got.Load != tt.wantLoad || got.BehindRate != tt.behind || got.Conns != 4 || got.Requests != tt.res.Requests {
				t.Errorf("got load %q behind %v conns %d requests %d; want %q %v 4 %d", got.Load, got.BehindRate, got.Conns, got.Requests, tt.wantLoad, tt.behind, tt.res.Requests)
			}
			if tt.res.Hist != nil && (got.P50Us != 50 || got.MaxUs != 100) {
				t.Errorf("latency: got p50 %v max %v, want 50 and 100", got.P50Us, got.MaxUs)
			}
		})
	}
}

// TestSummaryJSON pins the field names and order `wafbench load --json` prints.
func TestSummaryJSON(t *testing.T) {
	b, err := json.Marshal(summary{Errors: map[string]int64{"timeout": 1}, Statuses: map[int]int64{200: 2}, PerSecond: []int64{2}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"target":"","conns":0,"load":"","duration_s":0,"requests":0,"req_per_s":0,"rate_requested_per_s":0,"rate_achieved_per_s":0,"late":0,"client_lagged":0,"client_stalled":0,"due":0,"behind_rate":false,"warmup_errors":0,"errors":{"timeout":1},"statuses":{"200":2},"p50_us":0,"p90_us":0,"p99_us":0,"p999_us":0,"max_us":0,"per_second":[2],"client_cpu_us_per_request":0}`
	if got := string(b); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
