//go:build integration

package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/downstream"
)

// TestRunDownstream runs one short capped workload over each non-default
// downstream protocol against the real Envoy: over h2-tls in passthrough and
// both engines (the preflight's canaries go over h2-tls too), over h1-tls
// and h2c in passthrough. Envoy's own counters say which protocol it served,
// and the records say which protocol ran.
func TestRunDownstream(t *testing.T) {
	const n = 200
	tests := []struct {
		p       downstream.Protocol
		mode    string
		streams int
	}{
		{downstream.H2TLS, "passthrough", 4},
		{downstream.H2TLS, "modsecurity", 1},
		{downstream.H2TLS, "coraza", 1},
		{downstream.H1TLS, "passthrough", 0},
		{downstream.H2C, "passthrough", 4},
	}
	for _, tt := range tests {
		t.Run(string(tt.p)+"/"+tt.mode, func(t *testing.T) {
			cfg := setup(t, []string{tt.mode}, []string{"headers@1"}, 1, n)
			cfg.Downstream, cfg.Streams = tt.p, tt.streams
			recs, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			r := recs[0]
			checkRecord(t, r, n)
			wantStreams := 0
			if tt.p.HTTP2() {
				wantStreams = max(tt.streams, 1)
			}
			if r.Downstream != string(tt.p) || r.Streams != wantStreams {
				t.Errorf("record downstream %q streams %d, want %q and %d", r.Downstream, r.Streams, tt.p, wantStreams)
			}
			st := envoyStats(t, filepath.Join(cfg.Dir, r.StatsFile))
			h1, h2 := st["http.ingress.downstream_rq_http1_total"], st["http.ingress.downstream_rq_http2_total"]
			served := h1
			if tt.p.HTTP2() {
				served = h2 // every request over HTTP/2, none over HTTP/1.1
				if h1 != 0 {
					t.Errorf("Envoy served %d HTTP/1.1 requests, want 0", h1)
				}
			} else if h2 != 0 {
				t.Errorf("Envoy served %d HTTP/2 requests, want 0", h2)
			}
			// The cap ends the window with up to Streams requests in
			// flight; a WAF mode's preflight sends two canaries.
			if served < n || served > n+int64(max(tt.streams, 1))+2 {
				t.Errorf("Envoy served %d requests over %s, want %d (+ canaries and in-flight streams)", served, tt.p, n)
			}
			if tt.p.TLS() {
				var handshakes int64
				for k, v := range st {
					if strings.HasSuffix(k, ".ssl.handshake") && strings.HasPrefix(k, "listener.") {
						handshakes += v
					}
				}
				if handshakes == 0 {
					t.Errorf("Envoy counted no TLS handshakes on its listener")
				}
				if b, err := os.ReadFile(filepath.Join(cfg.Dir, "tls", ".gitignore")); err != nil || string(b) != "*\n" {
					t.Errorf("tls/.gitignore: %q, %v; want \"*\\n\" (the key is never committed)", b, err)
				}
			}
		})
	}
}

// TestRunDownstreamRefused: a reference host serves plain HTTP/1.1 only.
func TestRunDownstreamRefused(t *testing.T) {
	cfg := setup(t, []string{"ref-direct"}, []string{"headers@1"}, 1, 10)
	cfg.Downstream = downstream.H2TLS
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "ref-direct serves plain HTTP/1.1 only") {
		t.Fatalf("Run: %v, want a refusal naming ref-direct", err)
	}
}
