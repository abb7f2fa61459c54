package envoy

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// glibcRegistersRseq says whether this machine's glibc registers rseq for
// every thread (2.35 and later), from `getconf GNU_LIBC_VERSION`.
func glibcRegistersRseq(t *testing.T) bool {
	out, err := exec.Command("getconf", "GNU_LIBC_VERSION").Output()
	if err != nil {
		t.Fatalf("getconf GNU_LIBC_VERSION (glibc's getconf, Debian package libc-bin): %v", err)
	}
	f := strings.Fields(string(out)) // "glibc 2.36"
	if len(f) != 2 || f[0] != "glibc" {
		t.Fatalf("getconf GNU_LIBC_VERSION: %q, want \"glibc X.Y\"", out)
	}
	v := strings.SplitN(f[1], ".", 3)
	major, _ := strconv.Atoi(v[0])
	minor := 0
	if len(v) > 1 {
		minor, _ = strconv.Atoi(v[1])
	}
	return major > 2 || major == 2 && minor >= 35
}

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
