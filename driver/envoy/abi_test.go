package envoy

import (
	"strings"
	"testing"
)

func TestCheckModuleABI(t *testing.T) {
	tests := []struct {
		version string
		want    string // "" = supported; else a part of the refusal
	}{
		{"1.40.0", ""},
		{"1.40.0/Clean/RELEASE/BoringSSL 9e5580933739775e8bce696a57a2e1bc99368f23", ""},
		{"1.39.0", ""},
		{"1.39.1", ""},
		{"1.39.3", ""},
		{"1.38.3", ""},
		{"1.38.2/Clean/RELEASE/BoringSSL abc", ""},
		{"1.37.0", "dynamic-module ABI sha256 4dae397a…: it lacks 4 callbacks"},
		{"1.36.2.post1", "exports 7 of the 16 callbacks"},
		{"1.36.2/Clean/RELEASE/BoringSSL dc2d309", "exports 7 of the 16 callbacks"},
		{"1.36.4", "exports 7 of the 16 callbacks"},
		{"1.39.2", ""},
		{"1.40.1-dev/Modified/RELEASE/BoringSSL abc", ""},
		{"1.37.1", "(as 1.37.x): it lacks 4 callbacks"},
		{"1.41.0", "not checked"},
		{"", "not checked"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) { checkRefusal(t, CheckModuleABI, tt.version, tt.want) })
	}
}

func TestCheckWasm(t *testing.T) {
	tests := []struct {
		version string
		want    string // "" = supported; else a part of the refusal
	}{
		{"1.40.0", ""},
		{"1.39.0/Clean/RELEASE/BoringSSL abc", ""},
		{"1.39.3", ""},
		{"1.38.3", "built without the V8 Wasm runtime"},
		{"1.38.2", "lacks WASI functions"},
		{"1.37.0", "lacks WASI functions"},
		{"1.36.2.post1", "lacks WASI functions"},
		{"1.41.0", "not checked against coraza-wasm"},
		{"1.40.1-dev", ""},
		{"1.38.9", "lacks WASI functions"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) { checkRefusal(t, CheckWasm, tt.version, tt.want) })
	}
}

// checkRefusal checks one answer of a release check: nil when want is
// empty, else an error containing want.
func checkRefusal(t *testing.T, check func(string) error, version, want string) {
	t.Helper()
	err := check(version)
	switch {
	case want == "" && err != nil:
		t.Errorf("check(%q) = %v, want supported", version, err)
	case want != "" && err == nil:
		t.Errorf("check(%q) = nil, want a refusal containing %q", version, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("check(%q) = %v, want it to contain %q", version, err, want)
	}
}

func TestReleasesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Releases() {
		if seen[r.Version] || r.ABI == "" {
			t.Errorf("release %q listed twice or without its ABI", r.Version)
		}
		seen[r.Version] = true
	}
}

func TestMissingCallbacksNotELF(t *testing.T) {
	if _, err := MissingCallbacks("abi_test.go", nil); err == nil || !strings.Contains(err.Error(), "abi_test.go") {
		t.Errorf("MissingCallbacks(a Go file) = %v, want an error naming it", err)
	}
	if _, err := Callbacks("abi_test.go"); err == nil {
		t.Error("Callbacks(a Go file) succeeded")
	}
}

func TestReleaseOf(t *testing.T) {
	for in, want := range map[string]string{
		"1.39.3/Clean/RELEASE/BoringSSL 6eb0d2d97489ec1b4e1584a004f5de443d97a41b": "1.39.3",
		"1.40.0":       "1.40.0",
		"1.36.2.post1": "1.36.2.post1",
	} {
		if got := ReleaseOf(in); got != want {
			t.Errorf("ReleaseOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVersionBinary(t *testing.T) {
	got := VersionBinary("/repo", "1.39.3")
	want := "/repo/build/envoy/1.39.3/envoy/_bin/envoy"
	if got != want {
		t.Errorf("VersionBinary = %q, want %q", got, want)
	}
}
