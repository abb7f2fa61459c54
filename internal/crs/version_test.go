package crs

import (
	"strings"
	"testing"
)

// TestVersionMismatchIsRefused: each way the recorded release can differ
// from the embedded one is an error naming both.
func TestVersionMismatchIsRefused(t *testing.T) {
	for _, c := range []struct {
		name, constant, source, signature, module, want string
	}{
		{"signature", "4.25.0", source, "4.26.0", "v4.25.0", "OWASP_CRS/4.26.0"},
		{"module", "4.25.0", source, "4.25.0", "v4.26.0", "v4.26.0 is linked"},
		{"source", "4.25.0", sourceModule + "@v4.24.0", "4.25.0", "v4.25.0", "crs.Source says"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkVersion(c.constant, c.source, c.signature, c.module)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	if err := checkVersion("4.25.0", source, "4.25.0", "v4.25.0"); err != nil {
		t.Errorf("matching versions: got %v, want nil", err)
	}
}
