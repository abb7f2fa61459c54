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

func TestSuiteRequests(t *testing.T) {
	reqs, err := SuiteRequests("train")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range reqs {
		names = append(names, r.Name)
	}
	want := []string{"train_api_get", "train_search", "train_login_form", "train_json_order", "train_form_text",
		"train_attack_traversal", "train_attack_cmd", "train_attack_json_sqli", "train_attack_cookie_php"}
	if !slices.Equal(names, want) {
		t.Errorf("train: got %q, want %q (each workload once, in suite order)", names, want)
	}
	if _, err := SuiteRequests("no-such-suite"); err == nil || !strings.Contains(err.Error(), "unknown suite") {
		t.Errorf("unknown suite: got %v, want an error naming it", err)
	}
}
