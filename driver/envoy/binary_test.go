package envoy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	out := "\n/x/envoy  version: 9e5580933739775e8bce696a57a2e1bc99368f23/1.40.0/Clean/RELEASE/BoringSSL\n\n"
	got, err := parseVersion(out)
	want := "1.40.0/Clean/RELEASE/BoringSSL 9e5580933739775e8bce696a57a2e1bc99368f23"
	if err != nil || got != want {
		t.Errorf("parseVersion = %q, %v; want %q", got, err, want)
	}
	if _, err := parseVersion("hello"); err == nil {
		t.Error("parseVersion(hello) succeeded")
	}
}

func TestFindBinaryFlagAndEnv(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "envoy")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ENVOY_BIN", "/nonexistent/envoy")
	if got, err := FindBinary(exe); err != nil || got != exe {
		t.Errorf("FindBinary(flag) = %q, %v; want %q", got, err, exe)
	}
	if _, err := FindBinary(""); err == nil || !strings.Contains(err.Error(), "ENVOY_BIN") {
		t.Errorf("FindBinary with bad ENVOY_BIN = %v, want error naming ENVOY_BIN", err)
	}
	t.Setenv("ENVOY_BIN", exe)
	if got, err := FindBinary(""); err != nil || got != exe {
		t.Errorf("FindBinary(ENVOY_BIN) = %q, %v; want %q", got, err, exe)
	}
	if _, err := FindBinary(dir); err == nil {
		t.Error("FindBinary(directory) succeeded")
	}
}
