package envoy

import (
	"context"
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
