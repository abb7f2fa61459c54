package caddywaf

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestRequestHeaders(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want [][2]string
	}{
		{"host first", "GET /a HTTP/1.1\r\nHost: bench.local\r\nUser-Agent: x\r\n\r\n",
			[][2]string{{"Host", "bench.local"}, {"User-Agent", "x"}}},
		{"repeated header, each value", "GET / HTTP/1.1\r\nHost: h\r\nAccept: a\r\nAccept: b\r\n\r\n",
			[][2]string{{"Host", "h"}, {"Accept", "a"}, {"Accept", "b"}}},
		{"chunked keeps Transfer-Encoding", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			[][2]string{{"Host", "h"}, {"Transfer-Encoding", "chunked"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := http.ReadRequest(bufioReader(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			got := requestHeaders(r)
			// Go's header map has no order: compare Host first, the rest as sets.
			if len(got) == 0 || got[0] != tt.want[0] {
				t.Fatalf("got %v, want Host first: %v", got, tt.want)
			}
			sortPairs(got[1:])
			want := slices.Clone(tt.want)
			sortPairs(want[1:])
			if !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

func TestCountersJSON(t *testing.T) {
	ctrRequests.Add(3)
	ctrBlockedPhase2.Add(1)
	rec := httptest.NewRecorder()
	if err := serveCounters(rec, httptest.NewRequest("GET", countersPath, nil)); err != nil {
		t.Fatal(err)
	}
	var doc statsDoc
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("%s: %v", rec.Body, err)
	}
	got := map[string]uint64{}
	var names []string
	for _, s := range doc.Stats {
		got[s.Name] = s.Value
		names = append(names, s.Name)
	}
	wantNames := []string{"wafbench_coraza_requests", "wafbench_coraza_blocked_phase1", "wafbench_coraza_blocked_phase2",
		"wafbench_coraza_body_too_large", "wafbench_coraza_engine_errors", gomaxprocsStat}
	if !slices.Equal(names, wantNames) {
		t.Errorf("names: got %v, want %v", names, wantNames)
	}
	if got["wafbench_coraza_requests"] < 3 || got["wafbench_coraza_blocked_phase2"] < 1 || got[gomaxprocsStat] != uint64(runtime.GOMAXPROCS(0)) {
		t.Errorf("values: got %v", got)
	}
	if err := serveCounters(httptest.NewRecorder(), httptest.NewRequest("POST", countersPath, nil)); err == nil {
		t.Error("POST: got nil error, want method not allowed")
	}
}

func sortPairs(p [][2]string) {
	slices.SortFunc(p, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }
