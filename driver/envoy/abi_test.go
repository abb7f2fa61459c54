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
		{"1.38.3", "http_filter_config_increment_counter"},
		{"1.38.2/Clean/RELEASE/BoringSSL abc", "ABI v0.1.0"},
		{"1.37.0", "lacks 5 callbacks"},
		{"1.36.2.post1", "send_response"},
		{"1.36.4", "12 of 21 missing"},
		{"1.41.0", "not checked"},
		{"1.3.0", "not checked"},
		{"", "not checked"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			err := CheckModuleABI(tt.version)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckModuleABI(%q) = %v, want supported", tt.version, err)
			case tt.want != "" && err == nil:
				t.Errorf("CheckModuleABI(%q) = nil, want a refusal containing %q", tt.version, tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("CheckModuleABI(%q) = %v, want it to contain %q", tt.version, err, tt.want)
			}
		})
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
