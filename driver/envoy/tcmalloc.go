package envoy

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// PerCPUCaches reports whether Envoy's tcmalloc runs with its per-CPU
// caches, from the admin /memory/tcmalloc statistics: they are on when
// tcmalloc has made per-CPU slabs resident.
//
// Envoy's official build uses Google's tcmalloc, which needs to register
// its own restartable sequence (rseq) with the kernel for per-CPU caches.
// glibc ≥ 2.35 registers one for every thread first, so on Debian 12 and
// other current distributions tcmalloc falls back to slower caches unless
// Envoy runs with GLIBC_TUNABLES=glibc.pthread.rseq=0 (google/tcmalloc#144).
// That changes what every allocation inside Envoy costs, the WAF modules'
// included, so each trial records it.
func (p *Process) PerCPUCaches(ctx context.Context) (bool, error) {
	body, err := p.admin(ctx, "/memory/tcmalloc")
	if err != nil {
		return false, err
	}
	return perCPUCachesActive(body)
}

// slabLine is the statistic PerCPUCaches reads, as tcmalloc prints it:
// "MALLOC:          65536 (    0.1 MiB) per-CPU slab resident bytes".
const slabLine = "per-CPU slab resident bytes"

func perCPUCachesActive(stats []byte) (bool, error) {
	for line := range strings.Lines(string(stats)) {
		rest, ok := strings.CutPrefix(line, "MALLOC:")
		if !ok || !strings.HasSuffix(strings.TrimSpace(rest), slabLine) {
			continue
		}
		n, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
		if err != nil {
			return false, fmt.Errorf("admin /memory/tcmalloc: %q: %w", strings.TrimSpace(line), err)
		}
		return n > 0, nil
	}
	return false, fmt.Errorf("admin /memory/tcmalloc: no %q line", slabLine)
}

// Memory is Envoy's allocator statistics from the admin /memory endpoint,
// in bytes: allocated (live allocations), heap_size (what tcmalloc holds
// from the system), pageheap_free and pageheap_unmapped (held but unused,
// mapped or returned), total_thread_cache and total_physical_bytes. Envoy
// prints the numbers as JSON strings.
func (p *Process) Memory(ctx context.Context) (map[string]int64, error) {
	body, err := p.admin(ctx, "/memory")
	if err != nil {
		return nil, err
	}
	return parseMemory(body)
}

func parseMemory(body []byte) (map[string]int64, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("admin /memory: %w", err)
	}
	out := map[string]int64{}
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) != nil {
			continue // not a number in a string
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			out[k] = n
		}
	}
	if _, ok := out["allocated"]; !ok {
		return nil, fmt.Errorf("admin /memory: no allocated figure in %.200s", body)
	}
	return out, nil
}
