// Package builds reads filters/builds.yaml, the declared ways of building each
// WAF engine into an Envoy dynamic module, and owns the manifest.json written
// beside every finished build.
//
// A build is named like a mode: the engine's default build is "<engine>", any
// other "<engine>@<name>". Its output lives in build/engines/<engine> or
// build/engines/<engine>-<name> (see Build.Dir).
package builds

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// The WAF engines, as a build's engine field names them. Each engine's
// name is spelled here once; driver/modes names the modes that run them.
const (
	ModSecurity = "modsecurity" // libmodsecurity (C++ module, nginx connector)
	Coraza      = "coraza"      // coraza/v3 (Go module, proxy-wasm filter, Caddy handler)
)

// Engines lists the engines in report order.
var Engines = []string{ModSecurity, Coraza}

// source kinds.
const (
	sourceDebianPackage = "debian-package"
	sourceDebianSource  = "debian-source"
	sourceGoModule      = "go-module"
)

// Link modes.
const (
	linkShared = "shared"
	LinkStatic = "static"
)

// allocatorMimalloc is the one private allocator a build may link
// (allocator.package).
const allocatorMimalloc = "mimalloc"

// ctypeInline is the one value of ctype besides "".
const ctypeInline = "inline"

// source says where a build's engine comes from.
type source struct {
	Kind    string `json:"kind"`
	Package string `json:"package,omitempty"`
	Suite   string `json:"suite,omitempty"`
	Archive string `json:"archive,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	Modfile string `json:"modfile,omitempty"`
}

// pgo names the profile an optimised build consumes: trained on the
// instrumented build From (same engine; empty for Go, which profiles the
// default build's code) by the suite Training.
type pgo struct {
	From     string `json:"from,omitempty"`
	Training string `json:"training"`
}

// Build is one recipe of filters/builds.yaml.
type Build struct {
	Engine     string   `json:"engine"`
	Name       string   `json:"name,omitempty"`
	Default    bool     `json:"default,omitempty"`
	Version    string   `json:"version"`
	Source     source   `json:"source"`
	Compiler   string   `json:"compiler"`
	Flags      string   `json:"flags,omitempty"`
	LTO        string   `json:"lto,omitempty"`
	Link       string   `json:"link"`
	Tags       []string `json:"tags,omitempty"`
	Instrument bool     `json:"instrument,omitempty"`
	PGO        *pgo     `json:"pgo,omitempty"`
	// Allocator, when set, is a private C++ allocator built from this Debian
	// source package (mimalloc) and linked into a static modsecurity module:
	// operator new/delete of the module, the engine and a static libstdc++
	// go to it instead of Envoy's tcmalloc; malloc/free stay Envoy's.
	Allocator *source `json:"allocator,omitempty"`
	// Ctype "inline": the module defines the ctype functions libmodsecurity
	// calls (filters/modsecurity/ctype_inline.cc), so that they inline
	// instead of calling glibc's; "" calls glibc's.
	Ctype string `json:"ctype,omitempty"`
}

// Mode is the build's mode name: "<engine>" for the default build,
// "<engine>@<name>" otherwise.
func (b *Build) Mode() string {
	if b.Name == "" {
		return b.Engine
	}
	return b.Engine + "@" + b.Name
}

// dirName is the build's directory name under build/engines.
func (b *Build) dirName() string {
	if b.Name == "" {
		return b.Engine
	}
	return b.Engine + "-" + b.Name
}

// Dir is the build's output directory, root/build/engines/<DirName>, where
// root is the repository root.
func (b *Build) Dir(root string) string {
	return root + "/build/engines/" + b.dirName()
}

// ModuleFile is the module's file name inside Dir; the Envoy module name
// stays wafbench_<engine> for every build.
func (b *Build) ModuleFile() string { return "libwafbench_" + b.Engine + ".so" }

// Set is the parsed builds.yaml.
type Set struct {
	Path   string
	Builds []Build
}

// Find returns the build whose mode name is mode.
func (s *Set) Find(mode string) (*Build, bool) {
	for i := range s.Builds {
		if s.Builds[i].Mode() == mode {
			return &s.Builds[i], true
		}
	}
	return nil, false
}

// Default returns the engine's default build.
func (s *Set) Default(engine string) (*Build, bool) {
	for i := range s.Builds {
		if s.Builds[i].Engine == engine && s.Builds[i].Default {
			return &s.Builds[i], true
		}
	}
	return nil, false
}

// modes lists every build's mode name in file order.
func (s *Set) modes() []string {
	out := make([]string, len(s.Builds))
	for i := range s.Builds {
		out[i] = s.Builds[i].Mode()
	}
	return out
}

// Load reads and validates a builds.yaml file.
func Load(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Path = path
	return s, nil
}

// Parse decodes and validates the text of a builds.yaml file. YAML anchors
// and aliases are resolved; unknown fields are refused.
func Parse(data []byte) (*Set, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	var top struct {
		Builds []json.RawMessage `json:"builds"`
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("top level: %v", err)
	}
	if len(top.Builds) == 0 {
		return nil, fmt.Errorf("no builds declared")
	}
	s := &Set{}
	for i, raw := range top.Builds {
		var b Build
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&b); err != nil {
			var loose struct{ Engine, Name string }
			_ = json.Unmarshal(raw, &loose)
			return nil, fmt.Errorf("build %s: %v", label(i, loose.Engine, loose.Name), strings.TrimPrefix(err.Error(), "json: "))
		}
		s.Builds = append(s.Builds, b)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

func label(i int, engine, name string) string {
	switch {
	case engine == "":
		return fmt.Sprintf("#%d", i+1)
	case name == "":
		return fmt.Sprintf("#%d (%s)", i+1, engine)
	default:
		return fmt.Sprintf("#%d (%s@%s)", i+1, engine, name)
	}
}

var (
	nameRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Validate checks every build and the set as a whole: known engines, source
// kinds, link and lto values; exactly one default build per engine; unique
// names; pgo builds naming an instrumented build of the same engine. The
// first problem is returned as one line naming the build and the field.
func (s *Set) Validate() error {
	seen := map[string]bool{}
	defaults := map[string]int{}
	for i := range s.Builds {
		b := &s.Builds[i]
		if err := b.validate(); err != nil {
			return fmt.Errorf("build %s: %v", label(i, b.Engine, b.Name), err)
		}
		if b.Default && defaults[b.Engine] > 0 {
			return fmt.Errorf("build %s: default: %s already has a default build", label(i, b.Engine, b.Name), b.Engine)
		}
		if seen[b.Mode()] {
			return fmt.Errorf("build %s: name: %q declared twice", label(i, b.Engine, b.Name), b.Mode())
		}
		seen[b.Mode()] = true
		if b.Default {
			defaults[b.Engine]++
		}
	}
	for _, e := range Engines {
		hasAny := false
		for i := range s.Builds {
			hasAny = hasAny || s.Builds[i].Engine == e
		}
		if hasAny && defaults[e] != 1 {
			return fmt.Errorf("engine %s: default: want exactly one default build, got %d", e, defaults[e])
		}
	}
	for i := range s.Builds {
		b := &s.Builds[i]
		if b.PGO == nil || b.PGO.From == "" {
			continue
		}
		from, ok := s.Find(b.Engine + "@" + b.PGO.From)
		if !ok {
			return fmt.Errorf("build %s: pgo.from: no build %s@%s", label(i, b.Engine, b.Name), b.Engine, b.PGO.From)
		}
		if !from.Instrument {
			return fmt.Errorf("build %s: pgo.from: %s is not an instrumented build", label(i, b.Engine, b.Name), from.Mode())
		}
		if from.Version != b.Version || from.Source != b.Source {
			return fmt.Errorf("build %s: pgo.from: %s builds another engine source (version or source differ)", label(i, b.Engine, b.Name), from.Mode())
		}
	}
	return nil
}

func (b *Build) validate() error {
	known := false
	for _, e := range Engines {
		known = known || b.Engine == e
	}
	if !known {
		return fmt.Errorf("engine: unknown engine %q (want %s)", b.Engine, strings.Join(Engines, " or "))
	}
	switch {
	case b.Default && b.Name != "":
		return fmt.Errorf("name: the default build has no name, got %q", b.Name)
	case !b.Default && b.Name == "":
		return fmt.Errorf("name: required for a build that is not the default")
	case b.Name != "" && !nameRE.MatchString(b.Name):
		return fmt.Errorf("name: %q: want lowercase letters, digits, '.', '_' or '-'", b.Name)
	case b.Version == "":
		return fmt.Errorf("version: required")
	case b.Compiler == "":
		return fmt.Errorf("compiler: required")
	}
	switch b.Link {
	case linkShared, LinkStatic:
	default:
		return fmt.Errorf("link: unknown link mode %q (want shared or static)", b.Link)
	}
	switch b.LTO {
	case "", "thin":
	default:
		return fmt.Errorf("lto: unknown value %q (want \"\" or thin)", b.LTO)
	}
	if err := b.validateSource(); err != nil {
		return err
	}
	if err := b.validateAllocator(); err != nil {
		return err
	}
	if err := b.validateCtype(); err != nil {
		return err
	}
	if b.Engine == Coraza {
		if b.Compiler != "go" {
			return fmt.Errorf("compiler: coraza builds with go, got %q", b.Compiler)
		}
		if b.LTO != "" || b.Instrument {
			return fmt.Errorf("lto/instrument: not supported for coraza (Go PGO uses a CPU profile)")
		}
	} else {
		if len(b.Tags) > 0 {
			return fmt.Errorf("tags: Go build tags apply to coraza only")
		}
		if b.Source.Kind == sourceDebianPackage && (b.Link != linkShared || b.LTO != "" || b.Instrument || b.PGO != nil) {
			return fmt.Errorf("source: a debian-package build links the packaged library shared, without lto, instrument or pgo")
		}
		if b.LTO == "thin" && !strings.HasPrefix(b.Compiler, "clang") {
			return fmt.Errorf("lto: thin needs a clang compiler, got %q", b.Compiler)
		}
		if (b.Instrument || b.PGO != nil) && !strings.HasPrefix(b.Compiler, "clang") {
			return fmt.Errorf("compiler: instrumentation PGO needs clang, got %q", b.Compiler)
		}
	}
	if b.Instrument && b.PGO != nil {
		return fmt.Errorf("pgo: an instrumented build cannot also consume a profile")
	}
	if b.Instrument && b.Default {
		return fmt.Errorf("instrument: the default build cannot be instrumented")
	}
	if b.PGO != nil {
		if b.PGO.Training == "" {
			return fmt.Errorf("pgo.training: required (the suite that trains the profile)")
		}
		if b.Engine == ModSecurity && b.PGO.From == "" {
			return fmt.Errorf("pgo.from: required for modsecurity (the instrumented build to train)")
		}
		if b.Engine == Coraza && b.PGO.From != "" {
			return fmt.Errorf("pgo.from: coraza profiles are CPU profiles of the build itself; leave from empty")
		}
	}
	return nil
}

func (b *Build) validateAllocator() error {
	a := b.Allocator
	switch {
	case a == nil:
		return nil
	case b.Engine != ModSecurity || b.Link != LinkStatic:
		return fmt.Errorf("allocator: a private allocator links into static modsecurity builds only")
	case a.Kind != sourceDebianSource || a.Package != allocatorMimalloc:
		return fmt.Errorf("allocator: want kind debian-source and package %s, got kind %q package %q", allocatorMimalloc, a.Kind, a.Package)
	case a.Suite == "" || a.Archive == "":
		return fmt.Errorf("allocator.suite, allocator.archive: required")
	case !sha256RE.MatchString(a.SHA256):
		return fmt.Errorf("allocator.sha256: want 64 lowercase hex digits, got %q", a.SHA256)
	case a.Modfile != "":
		return fmt.Errorf("allocator.modfile: only for go-module sources")
	}
	return nil
}

func (b *Build) validateCtype() error {
	switch {
	case b.Ctype == "":
		return nil
	case b.Ctype != ctypeInline:
		return fmt.Errorf("ctype: unknown value %q (want \"\" or %s)", b.Ctype, ctypeInline)
	case b.Engine != ModSecurity || b.Link != LinkStatic:
		return fmt.Errorf("ctype: inline ctype functions link into static modsecurity builds only")
	}
	return nil
}

func (b *Build) validateSource() error {
	src := b.Source
	switch src.Kind {
	case sourceDebianPackage:
		if b.Engine != ModSecurity || src.Package == "" {
			return fmt.Errorf("source.package: a debian-package source needs package (modsecurity only)")
		}
	case sourceDebianSource:
		if b.Engine != ModSecurity {
			return fmt.Errorf("source.kind: debian-source is for modsecurity")
		}
		for _, f := range []struct{ name, v string }{{"suite", src.Suite}, {"package", src.Package}, {"archive", src.Archive}} {
			if f.v == "" {
				return fmt.Errorf("source.%s: required for debian-source", f.name)
			}
		}
		if !sha256RE.MatchString(src.SHA256) {
			return fmt.Errorf("source.sha256: want 64 lowercase hex digits, got %q", src.SHA256)
		}
	case sourceGoModule:
		if b.Engine != Coraza {
			return fmt.Errorf("source.kind: go-module is for coraza")
		}
	default:
		return fmt.Errorf("source.kind: unknown source kind %q (want debian-package, debian-source or go-module)", src.Kind)
	}
	if src.Modfile != "" && src.Kind != sourceGoModule {
		return fmt.Errorf("source.modfile: only for go-module sources")
	}
	return nil
}
