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
