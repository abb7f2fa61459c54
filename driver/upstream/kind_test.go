package upstream

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseKind(t *testing.T) {
	tests := []struct {
		in      string
		want    Kind
		wantErr string
	}{
		{"", Own, ""},
		{"wafbench", Own, ""},
		{"go-httpbin", GoHTTPBin, ""},
		{"httpbin", "", `unknown upstream "httpbin"`},
		{"nginx", "", `unknown upstream "nginx"`},
	}
	for _, tt := range tests {
		got, err := ParseKind(tt.in)
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("ParseKind(%q): got %q, %v; want %q", tt.in, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseKind(%q): got %q, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
		}
	}
}

func TestKindCommandAndCheck(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		k    Kind
		want string
	}{
		{Own, "/x/wafbench upstream --listen 127.0.0.1:0 --addr-file /t/a"},
		{GoHTTPBin, filepath.Join(root, httpBinBinaryRel) + " -listen 127.0.0.1:0 -addr-file /t/a"},
	}
	for _, tt := range tests {
		if got := strings.Join(tt.k.Command(root, "/x/wafbench", "127.0.0.1:0", "/t/a").Args, " "); got != tt.want {
			t.Errorf("%s: Command: got %q, want %q", tt.k, got, tt.want)
		}
	}
	if err := GoHTTPBin.Check(root, ""); err == nil || !strings.Contains(err.Error(), "make modules") {
		t.Errorf("Check of a missing go-httpbin: got %v, want an error saying 'make modules'", err)
	}
	if v, err := Own.Version(root, ""); err != nil || v != "wafbench" {
		t.Errorf("Own.Version: got %q, %v; want wafbench", v, err)
	}
}
