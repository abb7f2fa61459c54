package builds

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func TestLoadRepoBuilds(t *testing.T) {
	s, err := Load(filepath.Join(repoRoot(t), "filters", "builds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range Engines {
		if _, ok := s.Default(e); !ok {
			t.Errorf("no default build for %s", e)
		}
	}
	pgo, ok := s.Find("modsecurity@3.0.14-pgo")
	if !ok {
		t.Fatalf("modsecurity@3.0.14-pgo not found in %v", s.modes())
	}
	// The anchor &msc3014 must resolve to the same source in every build.
	if got, want := pgo.Source.SHA256, "99740ef9f7d2c7fc2e9850f25bafd5924de3df21b8d8900fbd9cd66acd0c4758"; got != want {
		t.Errorf("pgo source sha256: got %q, want %q", got, want)
	}
	if got, want := pgo.Dir("/r"), "/r/build/engines/modsecurity-3.0.14-pgo"; got != want {
		t.Errorf("Dir: got %q, want %q", got, want)
	}
}

const base = `builds:
  - engine: modsecurity
    default: true
    version: "3.0.9"
    source: {kind: debian-package, package: libmodsecurity-dev}
    compiler: g++
    flags: -O2
    link: shared
  - engine: modsecurity
    name: src
    version: "3.0.14"
    source: &s
      kind: debian-source
      suite: trixie
      package: modsecurity
      archive: modsecurity_3.0.14.orig.tar.gz
      sha256: 99740ef9f7d2c7fc2e9850f25bafd5924de3df21b8d8900fbd9cd66acd0c4758
    compiler: clang-14
    flags: -O2
    lto: thin
    link: static
  - engine: modsecurity
    name: instr
    version: "3.0.14"
    source: *s
    compiler: clang-14
    link: static
    instrument: true
  - engine: modsecurity
    name: pgo
    version: "3.0.14"
    source: *s
    compiler: clang-14
    link: static
    pgo: {from: instr, training: train}
  - engine: coraza
    default: true
    version: v3.8.1
    source: {kind: go-module}
    compiler: go
    link: shared
`

func TestParseModes(t *testing.T) {
	s, err := Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ mode, dir string }{
		{"modsecurity", "modsecurity"},
		{"modsecurity@src", "modsecurity-src"},
		{"modsecurity@pgo", "modsecurity-pgo"},
		{"coraza", "coraza"},
	}
	for _, tt := range tests {
		b, ok := s.Find(tt.mode)
		if !ok {
			t.Errorf("Find(%q): not found", tt.mode)
			continue
		}
		if got := b.Mode(); got != tt.mode {
			t.Errorf("Mode: got %q, want %q", got, tt.mode)
		}
		if got := b.dirName(); got != tt.dir {
			t.Errorf("%s DirName: got %q, want %q", tt.mode, got, tt.dir)
		}
	}
	if b, _ := s.Default("coraza"); b == nil || b.Version != "v3.8.1" {
		t.Errorf("Default(coraza): got %+v", b)
	}
	if _, ok := s.Find("modsecurity@nope"); ok {
		t.Errorf("Find(modsecurity@nope): found")
	}
}

// mimalloc is an allocator field as builds.yaml writes it (flow style).
const mimalloc = "{kind: debian-source, suite: bookworm, package: mimalloc, archive: mimalloc_2.0.9+ds.orig.tar.xz, " +
	"sha256: cbc9d207ff105ad1f0cb739c378076143a6452b8d0624309cea0abfb040e972b}"

// TestParseAllocator: a static modsecurity build may name mimalloc as its
// private allocator; the field reaches the build as declared.
func TestParseAllocator(t *testing.T) {
	s, err := Parse([]byte(strings.Replace(base, "training: train}\n", "training: train}\n    allocator: "+mimalloc+"\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	b, ok := s.Find("modsecurity@pgo")
	if !ok || b.Allocator == nil || b.Allocator.Package != "mimalloc" || b.Allocator.Suite != "bookworm" {
		t.Fatalf("modsecurity@pgo allocator = %+v, want mimalloc from bookworm", b.Allocator)
	}
	if other, _ := s.Find("modsecurity@src"); other.Allocator != nil {
		t.Errorf("modsecurity@src allocator = %+v, want none", other.Allocator)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, from, to, want string
	}{
		{"unknown engine", "engine: coraza\n    default: true", "engine: naxsi\n    default: true", `build #5 (naxsi): engine: unknown engine "naxsi"`},
		{"unknown field", "    lto: thin\n", "    lto: thin\n    optimise: yes\n", `build #2 (modsecurity@src): unknown field "optimise"`},
		{"unknown lto", "lto: thin", "lto: full", `build #2 (modsecurity@src): lto: unknown value "full"`},
		{"unknown link", "link: static\n  - engine: modsecurity\n    name: instr", "link: dynamic\n  - engine: modsecurity\n    name: instr", `build #2 (modsecurity@src): link: unknown link mode "dynamic"`},
		{"two defaults", "name: src", "default: true", `build #2 (modsecurity): default: modsecurity already has a default build`},
		{"no default", "    default: true\n    version: v3.8.1", "    version: v3.8.1", `build #5 (coraza): name: required`},
		{"pgo from unknown", "from: instr", "from: nope", `build #4 (modsecurity@pgo): pgo.from: no build modsecurity@nope`},
		{"pgo from not instrumented", "from: instr", "from: src", `build #4 (modsecurity@pgo): pgo.from: modsecurity@src is not an instrumented build`},
		{"bad sha", "sha256: 9974", "sha256: XX74", `build #2 (modsecurity@src): source.sha256: want 64 lowercase hex digits`},
		{"unknown source kind", "kind: go-module", "kind: git", `build #5 (coraza): source.kind: unknown source kind "git"`},
		{"duplicate name", "name: instr", "name: src", `build #3 (modsecurity@src): name: "modsecurity@src" declared twice`},
		{"allocator on a shared build", "    link: shared\n  - engine: modsecurity", "    link: shared\n    allocator: " + mimalloc + "\n  - engine: modsecurity",
			`build #1 (modsecurity): allocator: a private allocator links into static modsecurity builds only`},
		{"allocator not mimalloc", "training: train}\n", "training: train}\n    allocator: " + strings.Replace(mimalloc, "package: mimalloc", "package: jemalloc", 1) + "\n",
			`build #4 (modsecurity@pgo): allocator: want kind debian-source and package mimalloc, got kind "debian-source" package "jemalloc"`},
		{"allocator bad sha", "training: train}\n", "training: train}\n    allocator: " + strings.Replace(mimalloc, "sha256: cbc9", "sha256: cbc", 1) + "\n",
			`build #4 (modsecurity@pgo): allocator.sha256: want 64 lowercase hex digits`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(base, tt.from) {
				t.Fatalf("fixture lacks %q", tt.from)
			}
			_, err := Parse([]byte(strings.Replace(base, tt.from, tt.to, 1)))
			if err == nil {
				t.Fatalf("got no error, want %q", tt.want)
			}
			if got := err.Error(); !strings.Contains(got, tt.want) || strings.Contains(got, "\n") {
				t.Errorf("got %q, want one line containing %q", got, tt.want)
			}
		})
	}
}
