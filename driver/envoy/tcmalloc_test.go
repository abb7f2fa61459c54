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

// TestParseMemory reads admin /memory's numbers-in-strings and refuses an
// answer without the live allocations.
func TestParseMemory(t *testing.T) {
	got, err := parseMemory([]byte(`{"allocated": "6324176", "heap_size": "10485760", "pageheap_unmapped": "0", "pageheap_free": "0", "total_thread_cache": "2316504", "total_physical_bytes": "12582912"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got["allocated"] != 6324176 || got["heap_size"] != 10485760 || got["total_thread_cache"] != 2316504 || len(got) != 6 {
		t.Errorf("parseMemory = %v", got)
	}
	if _, err := parseMemory([]byte(`{"heap_size": "1"}`)); err == nil {
		t.Error("no allocated figure: want an error")
	}
}
