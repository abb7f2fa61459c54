//go:build integration

package envoy

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The real Envoy, started with and without glibc's rseq registration: its
// tcmalloc's per-CPU caches are on exactly when tcmalloc could register
// rseq itself.
func TestPerCPUCaches(t *testing.T) {
	bin := envoyBinary(t)
	for _, tc := range []struct {
		name string
		env  []string
		want bool
	}{
		// An empty GLIBC_TUNABLES overrides one the test may inherit.
		{"glibc registers rseq", []string{"GLIBC_TUNABLES="}, !glibcRegistersRseq(t)},
		{"glibc.pthread.rseq=0", []string{"GLIBC_TUNABLES=glibc.pthread.rseq=0"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p, err := Start(context.Background(), Options{Binary: bin, ConfigPath: writePassthrough(t, dir), WorkDir: dir, Env: tc.env})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop(patient)
			on, err := p.PerCPUCaches(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if on != tc.want {
				t.Errorf("per-CPU caches on = %v, want %v", on, tc.want)
			}
		})
	}
}

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
