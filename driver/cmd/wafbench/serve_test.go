//go:build integration

package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestServeReferenceHost starts `wafbench serve` for the Caddy reference
// host (build/caddy-coraza/caddy, `make modules`) and pokes it as a user
// would with curl: a benign GET passes, an SQL injection is denied by
// Coraza in Caddy.
func TestServeReferenceHost(t *testing.T) {
	_, url := startServe(t, "ref-caddy-coraza")
	do := func(req *http.Request) int {
		req.Header.Set("User-Agent", "wafbench/1.0")
		req.Header.Set("Accept", "*/*")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get, _ := http.NewRequest("GET", url+"/safe", nil)
	if got := do(get); got != 200 {
		t.Errorf("benign GET: got %d, want 200", got)
	}
	post, _ := http.NewRequest("POST", url+"/attack", strings.NewReader("user=1234+OR+1%3D1"))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if got := do(post); got != 403 {
		t.Errorf("SQL injection: got %d, want 403", got)
	}
}
