package main

import (
	"encoding/json"
	"net/http"
	"sync/atomic"

	"wafbench/filters/extproc/waf"
)

// admin serves the server's counters in the shape of Envoy's admin
// /stats?format=json, so a reader of Envoy's counters reads these with the
// same parser, and /ready.
type admin struct {
	eng   waf.Engine
	ready atomic.Bool
}

type statsDoc struct {
	Stats []statEntry `json:"stats"`
}

type statEntry struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

func (a *admin) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", a.stats)
	mux.HandleFunc("GET /ready", a.readyz)
	return mux
}

// stats answers /stats?format=json with the engine module's counters.
func (a *admin) stats(w http.ResponseWriter, r *http.Request) {
	if f := r.URL.Query().Get("format"); f != "json" {
		http.Error(w, "only /stats?format=json is served", http.StatusBadRequest)
		return
	}
	doc := statsDoc{Stats: []statEntry{}}
	for _, s := range a.eng.Stats() {
		doc.Stats = append(doc.Stats, statEntry{Name: s.Name, Value: s.Value})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

// readyz answers LIVE while the gRPC server accepts (Envoy's /ready words).
func (a *admin) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	if !a.ready.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("DRAINING\n"))
		return
	}
	_, _ = w.Write([]byte("LIVE\n"))
}
