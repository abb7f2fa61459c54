package repopath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRewrite(t *testing.T) {
	prefixes := [][2]string{{"/srv/checkout", ""}, {"/tmp", TempMarker}, {"/root", homeMarker}}
	for _, tc := range []struct{ name, in, want string }{
		{"file in the checkout", `{"path":"/srv/checkout/build/crs/main.conf"}`, `{"path":"build/crs/main.conf"}`},
		{"the checkout itself", `{"dir":"/srv/checkout"}`, `{"dir":"."}`},
		{"inside a command", `go build -modfile=/srv/checkout/go.mod -o /srv/checkout/build/x.so`, `go build -modfile=go.mod -o build/x.so`},
		{"a longer name is another directory", `"/srv/checkoutline/x"`, `"/srv/checkoutline/x"`},
		{"not where a path starts", `"/opt/srv/checkout/x"`, `"/opt/srv/checkout/x"`},
		{"temporary directory", `"/tmp/wafbench-run-1/nginx.conf"`, `"$TMPDIR/wafbench-run-1/nginx.conf"`},
		{"home directory", `GOMODCACHE=/root/go/pkg/mod`, `GOMODCACHE=$HOME/go/pkg/mod`},
		{"system path untouched", `"/usr/sbin/nginx"`, `"/usr/sbin/nginx"`},
		{"several", "/srv/checkout/a /tmp/b\n/srv/checkout", "a $TMPDIR/b\n."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(rewrite([]byte(tc.in), prefixes)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRootAndPortable(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("Root() = %s: %v", root, err)
	}
	in := `"` + filepath.Join(root, "build", "wafbench") + `" "` + filepath.Join(os.TempDir(), "x") + `"`
	if got, want := string(Portable([]byte(in))), `"build/wafbench" "$TMPDIR/x"`; got != want {
		t.Errorf("Portable(%s) = %s, want %s", in, got, want)
	}
}
