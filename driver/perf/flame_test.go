package perf

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestFoldedRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.folded")
	in := "envoy;main;a 30\nenvoy;main;b 10\n\nenvoy;main;a 5\nwrk:worker_0;x;y;b 20\n"
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFolded(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Folded{"envoy;main;a": 35, "envoy;main;b": 10, "wrk:worker_0;x;y;b": 20}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("ReadFolded: got %v, want %v", f, want)
	}
	if got := f.Total(); got != 65 {
		t.Errorf("Total: got %d, want 65", got)
	}
	out := filepath.Join(t.TempDir(), "out.folded")
	if err := f.Write(out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	if got, want := string(b), "envoy;main;a 35\nenvoy;main;b 10\nwrk:worker_0;x;y;b 20\n"; got != want {
		t.Errorf("Write: got %q, want %q", got, want)
	}
	top := f.Top(2)
	wantTop := []funcShare{{"a", 35, 100 * 35.0 / 65}, {"b", 30, 100 * 30.0 / 65}}
	if !reflect.DeepEqual(top, wantTop) {
		t.Errorf("Top(2): got %v, want %v", top, wantTop)
	}
	if got, want := f.Scale(0.1), (Folded{"envoy;main;a": 4, "envoy;main;b": 1, "wrk:worker_0;x;y;b": 2}); !reflect.DeepEqual(got, want) {
		t.Errorf("Scale(0.1): got %v, want %v", got, want)
	}
	if got := f.Scale(0.01); len(got) != 0 {
		t.Errorf("Scale(0.01): got %v, want every stack rounded away", got)
	}
}

func TestReadFoldedErrors(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"no count", "a;b;c\n", `p.folded:1: want "stack count", got "a;b;c"`},
		{"bad count", "a;b 1\na;c x\n", `p.folded:2: want "stack count", got "a;c x"`},
		{"negative", "a -3\n", `p.folded:1: want "stack count", got "a -3"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.folded")
			os.WriteFile(path, []byte(tt.in), 0o644)
			_, err := ReadFolded(path)
			if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
				t.Errorf("got %v, want an error ending %q", err, tt.want)
			}
		})
	}
}

func TestToolMissing(t *testing.T) {
	_, err := tool("inferno-no-such-tool")
	want := "inferno-no-such-tool not found: install inferno (./scripts/setup.sh does: cargo install inferno --root build, into build/bin)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestReadFoldedGzip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.folded.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("a;b 3\na;c 4\n"))
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFolded(path)
	if err != nil {
		t.Fatal(err)
	}
	if got["a;b"] != 3 || got["a;c"] != 4 || got.Total() != 7 {
		t.Errorf("got %v, want a;b 3, a;c 4", got)
	}
}
