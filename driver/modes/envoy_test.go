package modes

import (
	"slices"
	"strings"
	"testing"
)

func TestParseEnvoyRelease(t *testing.T) {
	tests := []struct {
		in                    string
		base, build, envoy    string
		unversioned, errMatch string
	}{
		{in: "passthrough~1.39.3", base: Passthrough, envoy: "1.39.3", unversioned: "passthrough"},
		{in: "coraza@re2~1.40.0", base: Coraza, build: "re2", envoy: "1.40.0", unversioned: "coraza@re2"},
		{in: "coraza-wasm~1.36.2.post1", base: CorazaWasm, envoy: "1.36.2.post1", unversioned: "coraza-wasm"},
		{in: "modsecurity", base: ModSecurity, unversioned: "modsecurity"},
		{in: "passthrough~", errMatch: "want a release like"},
		{in: "passthrough~1.39", errMatch: "want a release like"},
		{in: "passthrough~latest", errMatch: "want a release like"},
		{in: "ref-direct~1.39.3", errMatch: "runs no Envoy"},
		{in: "ref-nginx-modsecurity~1.39.3", errMatch: "runs no Envoy"},
		{in: "bogus~1.39.3", errMatch: "unknown mode"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
					t.Fatalf("Parse(%q) = %+v, %v; want an error containing %q", tt.in, got, err, tt.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got.Base != tt.base || got.Build != tt.build || got.Envoy != tt.envoy {
				t.Errorf("Parse(%q) = %+v, want base %q build %q envoy %q", tt.in, got, tt.base, tt.build, tt.envoy)
			}
			if got.String() != tt.in || got.Unversioned() != tt.unversioned {
				t.Errorf("Parse(%q): String %q, Unversioned %q; want %q, %q", tt.in, got.String(), got.Unversioned(), tt.in, tt.unversioned)
			}
		})
	}
}

func TestEnvoyReleaseKeys(t *testing.T) {
	if got, want := ExpectKeys("coraza@re2~1.39.3"), []string{"coraza@re2~1.39.3", "coraza@re2", "coraza", "waf", "default"}; !slices.Equal(got, want) {
		t.Errorf("ExpectKeys = %v, want %v", got, want)
	}
	if !IsEnvoyWAF("modsecurity~1.39.3") || IsEnvoyWAF("passthrough~1.39.3") || !IsWasm("coraza-wasm~1.40.0") {
		t.Error("name-only functions do not see through ~release")
	}
	if got := WithEnvoy("passthrough~1.39.3", "1.40.0"); got != "passthrough~1.40.0" {
		t.Errorf("WithEnvoy = %q", got)
	}
	if got := WithEnvoy("passthrough~1.39.3", ""); got != "passthrough" {
		t.Errorf("WithEnvoy(\"\") = %q", got)
	}
	ms := []string{"coraza~1.40.0", "passthrough~1.9.0", "passthrough~1.39.3", "coraza", "passthrough~1.10.0", "passthrough"}
	Sort(ms)
	want := []string{"passthrough", "passthrough~1.9.0", "passthrough~1.10.0", "passthrough~1.39.3", "coraza", "coraza~1.40.0"}
	if !slices.Equal(ms, want) {
		t.Errorf("Sort = %v, want %v", ms, want)
	}
	p := Palette([]string{"coraza~1.39.3", "coraza~1.40.0"})
	if p["coraza~1.39.3"] == p["coraza~1.40.0"] {
		t.Error("Palette gives two releases of one mode the same colour")
	}
}
