package callgrind

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadTotal(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       int64
		err        string
	}{
		{"totals wins", "# callgrind format\nevents: Ir\nsummary: 140096429\n\nfn=(1) main\n0 5\ntotals: 144759027\n", 144759027, ""},
		{"summary alone", "events: Ir\nsummary: 42\n", 42, ""},
		{"neither", "events: Ir\nfn=(1) main\n", 0, "no totals or summary line"},
		{"garbage", "totals: many\n", 0, `totals: " many"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "callgrind.out.1")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadTotal(path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %d, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestMeterFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meter.flag")
	m, err := NewMeter(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{true, false, true} {
		if err := m.ExcludeHooks(on); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		want := "0"
		if on {
			want = "1"
		}
		if err != nil || string(b) != want {
			t.Fatalf("ExcludeHooks(%v): file holds %q, %v; want %q", on, b, err, want)
		}
	}
}
