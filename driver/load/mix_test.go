package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRunMix drives three classes at weights 3:1:1 against a server that
// denies /deny: each response is judged by its own class (a 403 is valid
// for the class that expects it and an error for the one that does not),
// the classes' counts follow their weights, and the totals are the sums.
func TestRunMix(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/deny") {
			w.WriteHeader(http.StatusForbidden)
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	mk := func(name, path string, expect, weight int) Class {
		r := Build("GET", path, [][2]string{{"Accept", "*/*"}}, nil, addr)
		r.Name, r.ExpectStatus = name, expect
		return Class{Request: r, Weight: weight}
	}
	classes := []Class{mk("ok", "/ok", 200, 3), mk("deny", "/deny", 403, 1), mk("wrong", "/deny-too", 200, 1)}
	const n = 1000
	res, err := RunMix(context.Background(), Options{Target: addr, Conns: 2, Duration: forever, Timeout: forever, MaxRequests: n, Seed: 3}, classes)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Classes) != 3 {
		t.Fatalf("Classes: got %d, want 3", len(res.Classes))
	}
	ok, deny, wrong := res.Classes[0], res.Classes[1], res.Classes[2]
	if wrong.Requests != 0 || wrong.Errors["status_403"] == 0 || len(wrong.Errors) != 1 {
		t.Errorf("wrong: Requests %d Errors %v, want 0 and only status_403", wrong.Requests, wrong.Errors)
	}
	if len(ok.Errors)+len(deny.Errors) != 0 {
		t.Errorf("ok/deny errors: %v %v, want none", ok.Errors, deny.Errors)
	}
	if ok.Hist.TotalCount() != ok.Requests || deny.Hist.TotalCount() != deny.Requests {
		t.Errorf("histograms %d %d, requests %d %d", ok.Hist.TotalCount(), deny.Hist.TotalCount(), ok.Requests, deny.Requests)
	}
	total := ok.Statuses[200] + deny.Statuses[403] + wrong.Statuses[403]
	if total != n || res.Requests != ok.Requests+deny.Requests || res.Errors["status_403"] != wrong.Errors["status_403"] {
		t.Errorf("totals: responses %d (want %d), Requests %d = %d+%d?, status_403 errors %d vs %d", total, n,
			res.Requests, ok.Requests, deny.Requests, res.Errors["status_403"], wrong.Errors["status_403"])
	}
	// Each connection walks whole passes of the 5-long sequence; a cap cuts
	// at most one pass per connection short.
	for _, c := range res.Classes {
		want := int64(n * c.Weight / 5)
		var got int64
		for _, k := range c.Statuses {
			got += k
		}
		if d := got - want; d < -10 || d > 10 {
			t.Errorf("class %s: %d responses, want %d ±10 (weight %d of 5)", c.Name, got, want, c.Weight)
		}
	}
	if res.Hist.TotalCount() != res.Requests {
		t.Errorf("merged Hist %d, Requests %d", res.Hist.TotalCount(), res.Requests)
	}
}

// TestRunMixBad checks a mix's bad input: no class, a zero weight, too
// large a sum of weights.
func TestRunMixBad(t *testing.T) {
	r := Build("GET", "/", nil, nil, "h")
	opts := Options{Target: "127.0.0.1:1", Conns: 1, Duration: 1}
	for _, tc := range []struct {
		classes []Class
		want    string
	}{
		{nil, "mix: want at least one class"},
		{[]Class{{Request: Request{Name: "a", Raw: r.Raw, ExpectStatus: 200}, Weight: 0}}, `request "a": weight: want ≥ 1, got 0`},
		{[]Class{{Request: Request{Name: "a", Raw: r.Raw, ExpectStatus: 200}, Weight: MaxMixWeight + 1}}, "mix: weights sum to 10001, want ≤ 10000"},
	} {
		if _, err := RunMix(context.Background(), opts, tc.classes); err == nil || err.Error() != tc.want {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// TestSequence checks that a pass over the sequence holds every class
// exactly its weight's number of times, and that a seed fixes the order.
func TestSequence(t *testing.T) {
	cs := []Class{{Weight: 7}, {Weight: 2}, {Weight: 1}}
	a, b := sequence(cs, 5), sequence(cs, 5)
	if string(a) != string(b) {
		t.Error("same seed, different sequences")
	}
	var n [3]int
	for _, c := range a {
		n[c]++
	}
	if n != [3]int{7, 2, 1} {
		t.Errorf("counts %v, want [7 2 1]", n)
	}
}
