//go:build integration

package perf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffFlamegraph draws a differential graph from two small profiles
// with the real inferno tools.
func TestDiffFlamegraph(t *testing.T) {
	if err := FlameAvailable(); err != nil {
		t.Fatal(err) // ./scripts/setup.sh installs inferno
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.folded"), filepath.Join(dir, "b.folded")
	(Folded{"envoy;main;parse": 50, "envoy;main;match": 50}).Write(a)
	(Folded{"envoy;main;parse": 50, "envoy;main;match": 150}).Write(b)
	svg := filepath.Join(dir, "d.svg")
	if err := DiffFlamegraph(a, b, svg, "a → b"); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "match", "parse", "a → b"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("diff SVG lacks %q", want)
		}
	}
}
