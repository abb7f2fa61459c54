package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree writes files (path → content) under a fresh root.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const okTest = "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n"

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		conf  config
		want  []string // substrings of the problems, one each, in order
	}{
		{"clean", map[string]string{"go.mod": "module x\n", "a/a_test.go": okTest}, config{Modules: []string{"."}}, nil},
		{"tag not passed", map[string]string{"go.mod": "module x\n", "a/a_test.go": "//go:build slow\n\n" + okTest},
			config{Modules: []string{"."}}, []string{"a/a_test.go: its build constraints exclude it"}},
		{"tag passed", map[string]string{"go.mod": "module x\n", "a/a_test.go": "//go:build slow\n\n" + okTest},
			config{Tags: []string{"slow"}, Modules: []string{"."}}, nil},
		{"integration tier under make test's tags", map[string]string{"go.mod": "module x\n", "a/a_test.go": okTest,
			"a/b_integration_test.go": "//go:build integration\n\n" + okTest, "a/c_test.go": "//go:build integration && modsecurity_engine\n\n" + okTest},
			config{Tags: []string{"integration", "modsecurity_engine"}, Modules: []string{"."}}, nil},
		{"combined constraint with one tag missing", map[string]string{"go.mod": "module x\n",
			"a/c_test.go": "//go:build integration && modsecurity_engine\n\n" + okTest},
			config{Tags: []string{"integration"}, Modules: []string{"."}}, []string{"a/c_test.go: its build constraints exclude it"}},
		{"skip in the integration tier", map[string]string{"go.mod": "module x\n", "a/a_test.go": "//go:build integration\n\n" +
			"package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) { t.Skip(\"no envoy\") }\n",
			"a/testdata/script/integration/s.txtar": "skip 'no envoy'\n"},
			config{Tags: []string{"integration"}, Modules: []string{"."}}, []string{"a/a_test.go:7: Skip skips", "a/testdata/script/integration/s.txtar:1: testscript skip"}},
		{"other GOOS by file name", map[string]string{"go.mod": "module x\n", "a/a_windows_test.go": okTest},
			config{Modules: []string{"."}}, []string{"a/a_windows_test.go: its build constraints exclude it"}},
		{"env-gated skip", map[string]string{"go.mod": "module x\n", "a/a_test.go": `package a

import (
	"os"
	"testing"
)

func TestSlow(t *testing.T) {
	if os.Getenv("SLOW") != "1" {
		t.Skip("slow")
	}
}
`}, config{Modules: []string{"."}}, []string{"a/a_test.go:10: Skip skips the test"}},
		{"skips of every kind", map[string]string{"go.mod": "module x\n", "a/a_test.go": `package a

import (
	"os"
	"testing"
)

func TestA(t *testing.T) {
	if testing.Short() {
		t.SkipNow()
	}
	if _, ok := os.LookupEnv("X"); !ok {
		return
	}
	t.Skipf("%d", 1)
}

func BenchmarkB(b *testing.B) { b.Skip() }
`}, config{Modules: []string{"."}}, []string{
			"a/a_test.go:10: SkipNow", "a/a_test.go:12: an if on an environment variable that only returns",
			"a/a_test.go:15: Skipf", "a/a_test.go:18: Skip skips", "a/a_test.go:9: testing.Short"}},
		{"env read that configures, not gates", map[string]string{"go.mod": "module x\n", "a/a_test.go": `package a

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if os.Getenv("AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func main() {}
`}, config{Modules: []string{"."}}, nil},
		{"module not tested", map[string]string{"go.mod": "module x\n", "sub/go.mod": "module y\n", "sub/p/p_test.go": okTest},
			config{Modules: []string{"."}}, []string{"sub/p/p_test.go: in module sub, where make test runs no go test"}},
		{"testscript skip", map[string]string{"go.mod": "module x\n", "a/testdata/script/s.txtar": "exec true\n[!exec:perf] skip 'no perf'\n-- f --\nskip\n",
			"a/testdata/other/b_test.go": "not go"}, config{Modules: []string{"."}}, []string{"a/testdata/script/s.txtar:2: testscript skip"}},
		{"gtest gates", map[string]string{"go.mod": "module x\n", "c/x_test.cc": "TEST(A, DISABLED_B) {}\nTEST(A, C) { GTEST_SKIP() << \"no\"; }\nTEST(A, D) {}\n"},
			config{Modules: []string{"."}}, []string{"c/x_test.cc:1: GoogleTest", "c/x_test.cc:2: GoogleTest"}},
		{"build outputs and hidden dirs ignored", map[string]string{"go.mod": "module x\n", "build/a_test.go": "//go:build never\n\n" + okTest,
			".venv/b_test.go": "//go:build never\n\n" + okTest}, config{Modules: []string{"."}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := check(tree(t, tt.files), tt.conf)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %q, want %d like %q", len(got), got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d: got %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestRun(t *testing.T) {
	root := tree(t, map[string]string{"go.mod": "module x\n", "a/a_test.go": "//go:build slow\n\n" + okTest})
	for _, tt := range []struct {
		args   []string
		code   int
		output string
	}{
		{[]string{root}, 1, "1 test(s) make test would not run"},
		{[]string{"-tags", "slow", root}, 0, "1 test files checked (1 Go, 0 testscript, 0 GoogleTest)"},
		{[]string{"-tags", "slow", filepath.Join(root, "missing")}, 2, "not a directory"},
		{[]string{root, root}, 2, "at most one argument"},
	} {
		var out, errb bytes.Buffer
		if code := run(tt.args, &out, &errb); code != tt.code || !strings.Contains(out.String()+errb.String(), tt.output) {
			t.Errorf("run %q: exit %d, output %q; want exit %d with %q", tt.args, code, out.String()+errb.String(), tt.code, tt.output)
		}
	}
}

// TestRepository: the check itself on this repository, with what make test
// passes (the Makefile's TEST_TAGS and TEST_MODULES), must find nothing.
func TestRepository(t *testing.T) {
	mk, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	conf := config{}
	for _, l := range strings.Split(string(mk), "\n") {
		if v, ok := strings.CutPrefix(l, "TEST_TAGS"); ok {
			conf.Tags = split(strings.TrimLeft(v, " :?="))
		}
		if v, ok := strings.CutPrefix(l, "TEST_MODULES"); ok {
			conf.Modules = split(strings.TrimLeft(v, " :?="))
		}
	}
	if !slices.Contains(conf.Modules, ".") {
		t.Fatalf("Makefile: TEST_MODULES %q lacks the root module", conf.Modules)
	}
	problems, n, err := check("../../..", conf)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if n.Go < 50 || n.Script < 1 || n.GTest < 1 {
		t.Errorf("checked %+v test files: the walk missed the tree", n)
	}
}
