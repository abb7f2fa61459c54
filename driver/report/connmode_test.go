package report

import "testing"

func TestLoadLabel(t *testing.T) {
	for _, tt := range []struct{ load, conn, want string }{
		{"closed", "", "closed"},
		{"open", "", "open"},
		{"closed", "per-request", "closed with per-request connections"},
	} {
		if got := loadLabel(tt.load, tt.conn); got != tt.want {
			t.Errorf("loadLabel(%q, %q): got %q, want %q", tt.load, tt.conn, got, tt.want)
		}
	}
}
