//go:build integration

package envoy

import (
	"context"
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
