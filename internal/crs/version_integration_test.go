//go:build integration

package crs

import (
	"debug/buildinfo"
	"os"
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
