package crs

import (
	"debug/buildinfo"
	"os"
	"strings"
	"testing"
)

// TestVersionIsMeasured: the CRS release recorded (Version, Source) is the
// one the rules state (SecComponentSignature) and the one the real
// wafbench executable links (its Go build information, as `go version -m`
// prints it; a test binary carries no dependency list).
func TestVersionIsMeasured(t *testing.T) {
	sig, err := embeddedVersion()
	if err != nil {
		t.Fatal(err)
	}
	if sig != version {
		t.Errorf("got signature OWASP_CRS/%s, want %s", sig, version)
	}
	if err := CheckVersion(); err != nil {
		t.Error(err)
	}
	bin := os.Getenv("WAFBENCH_BIN")
	if bin == "" {
		t.Fatal("WAFBENCH_BIN unset: run 'make build' and set it to build/wafbench (make test does)")
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var mod string
	for _, d := range bi.Deps {
		if d.Path == sourceModule {
			mod = d.Version
		}
	}
	if err := checkVersion(version, source, sig, mod); err != nil {
		t.Errorf("%s: %v", bin, err)
	}
}

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
