package envoy

import (
	"testing"
)

func TestPerCPUCachesBadStats(t *testing.T) {
	for _, in := range []string{
		"",
		"MALLOC:          abc (    0.1 MiB) per-CPU slab resident bytes\n",
	} {
		if _, err := perCPUCachesActive([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
