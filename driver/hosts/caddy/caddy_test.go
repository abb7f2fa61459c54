package caddy

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/hosts"
	"wafbench/driver/modes"
)

// The tests of caddy_integration_test.go run the Caddy executable `make
// modules` builds (build/caddy-coraza/caddy) over the CRS export in
// build/crs, in front of the real upstream server. The checks are counts of
// a fixed number of requests.

// mode is ref-caddy-coraza, as modes.Registry resolves it.
func mode(t *testing.T) modes.Mode {
	t.Helper()
	n, err := modes.Parse(modes.RefCaddyCoraza)
	if err != nil {
		t.Fatal(err)
	}
	return modes.Mode{Name: n}
}

// TestCaddyMissingBinary: a Caddy executable that is not there is named,
// with how to build it.
func TestCaddyMissingBinary(t *testing.T) {
	h := Host{Binary: filepath.Join(t.TempDir(), "caddy")}
	_, err := h.Start(context.Background(), mode(t), hosts.Stack{RulesFile: "/x/main.conf"},
		hosts.Where{UpstreamAddr: "127.0.0.1:9", Dir: t.TempDir(), TmpDir: t.TempDir(), Tag: "x"})
	if err == nil || !strings.Contains(err.Error(), "make modules") {
		t.Errorf("got %v, want an error saying to run 'make modules'", err)
	}
}
