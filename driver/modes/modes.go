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
// no builds of its own.
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
	"sort"
	"strings"

	"wafbench/driver/engine"
)

// Mode names that are not engine builds, and the engines.
const (
	Passthrough         = "passthrough"
	RefDirect           = "ref-direct"
	RefNginxModSecurity = "ref-nginx-modsecurity"
	RefCaddyCoraza      = "ref-caddy-coraza"
	CorazaWasm          = "coraza-wasm" // Coraza as a proxy-wasm filter in Envoy's V8

	ModSecurity = engine.ModSecurity // engine: libmodsecurity (C++ module)
	Coraza      = engine.Coraza      // engine: coraza/v3 (Go module)

	// Baseline is the mode WAF modes are compared against.
	Baseline = Passthrough
)

// Engines lists the WAF engines in report order.
var Engines = engine.All

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
}

// String is the canonical mode name.
func (n Name) String() string {
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

// Parse splits a mode name into its parts. It checks the syntax and the base
// name only; whether a build exists is Registry's question.
func Parse(s string) (Name, error) {
	rest, config, hasConfig := strings.Cut(s, "+")
	if hasConfig {
		if config == "" || strings.ContainsAny(config, "@/ \t,+") {
			return Name{}, fmt.Errorf("mode %q: configuration after '+' must be a name without '@', '/', ',', '+' or spaces", s)
		}
		n, err := Parse(rest)
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
	default:
		return Name{}, fmt.Errorf("unknown mode %q (want passthrough, modsecurity[@build], coraza[@build], %s, %s, %s[@build] or %s)", s, CorazaWasm, RefDirect, RefNginxModSecurity, RefCaddyCoraza)
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

// expectKeys are the keys of a workload's `expect` map that apply to n,
// most specific first: the mode's own name, its base name for a build (for
// coraza-wasm: coraza, the engine it runs in another host), then "waf" for
// any mode that runs an engine, then "default".
func (n Name) expectKeys() []string {
	keys := []string{n.String()}
	if n.Config != "" {
		keys = append(keys, n.WithConfig("").String())
	}
	if n.Build != "" {
		keys = append(keys, n.Base)
	}
	if n.IsWasm() {
		keys = append(keys, Coraza)
	}
	if n.Engine != "" {
		keys = append(keys, "waf")
	}
	return append(keys, "default")
}

// rank orders modes for tables and charts: passthrough, then each engine's
// builds (default build first), coraza-wasm, then reference hosts.
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
	case n.Base == RefDirect:
		return 4
	case n.Host == Nginx:
		return 5
	case n.Host == Caddy:
		return 6
	}
	return 7
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
	if ca, cb := must(a).Config == "", must(b).Config == ""; ca != cb {
		return ca
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
		if n.Build != "" || n.Config != "" {
			used[n.Base]++
			i = used[n.Base]
		}
		out[m] = ramp[i%len(ramp)]
	}
	return out
}
