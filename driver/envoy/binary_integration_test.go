//go:build integration

package envoy

import (
	"strings"
	"testing"
)

func TestVersionReal(t *testing.T) {
	v, err := Version(envoyBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("envoy %s", v)
	if !strings.HasPrefix(v, "1.40.") {
		t.Errorf("Version = %q, want Envoy 1.40.x", v)
	}
}

// envoyBinary returns the real Envoy or fails the test saying how to get it.
func envoyBinary(t *testing.T) string {
	t.Helper()
	bin, err := FindBinary("")
	if err != nil {
		t.Fatalf("%v (these tests run the real Envoy 1.40)", err)
	}
	return bin
}
