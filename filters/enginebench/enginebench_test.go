package enginebench

import (
	"slices"
	"strings"
	"testing"
)

func TestRequests(t *testing.T) {
	reqs, err := Requests()
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Request{}
	for _, r := range reqs {
		by[r.Name] = r
	}
	h := by["headers"]
	want := [][2]string{{":authority", "bench.local"}, {":path", "/safe"}, {":method", "GET"}, {":scheme", "http"},
		{"user-agent", "wafbench/1.0"}, {"accept", "*/*"}, {"x-forwarded-proto", "http"}}
	if !slices.Equal(h.Headers, want) || h.Body != nil || h.Want != 200 {
		t.Errorf("headers: got %q body %d bytes want %d; want %q, no body, 200", h.Headers, len(h.Body), h.Want, want)
	}
	j := by["json_4k"]
	if len(j.Body) != 4096 || !strings.HasPrefix(string(j.Body), `{"message":"ccc`) || j.Header("content-length") != "4096" ||
		j.Header("content-type") != "application/json" {
		t.Errorf("json_4k: body %d bytes, headers %q", len(j.Body), j.Headers)
	}
	if s := by["blocked_sqli"]; s.Want != 403 || s.Header(":method") != "POST" {
		t.Errorf("blocked_sqli: got want=%d method=%q", s.Want, s.Header(":method"))
	}
}
