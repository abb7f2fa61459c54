package callgrind

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"

	"wafbench/driver/account"
)

// The categories of an instruction account, in report order. Each names
// who executed the instructions (exclusive costs: a function's own
// instructions, not those of what it calls).
const (
	CatModule    = "our module"            // the WAF module's own code (C++ or Go)
	CatCgo       = "cgo crossings"         // Go module: cgo's C↔Go transitions and stubs
	CatCallbacks = "Envoy ABI callbacks"   // envoy_dynamic_module_callback_* and the unnamed code they call
	CatAlloc     = "Envoy allocator"       // Envoy's tcmalloc: malloc, free … and the unnamed code they call
	CatOwnAlloc  = "module's allocator"    // a build's private allocator in the module (mimalloc: allocator:)
	CatEnvoy     = "Envoy, other"          // Envoy code reached otherwise (unnamed in the stripped binary)
	CatEngine    = "engine"                // libmodsecurity; coraza (github.com/corazawaf/…)
	CatRegex     = "regex"                 // PCRE2 and its JIT code; Go's regexp
	CatGoRuntime = "Go runtime"            // runtime.*, maps, hashing, memmove (GC is off under callgrind)
	CatGoStd     = "Go standard library"   // strings, strconv, sync …
	CatGoDeps    = "other Go modules"      // the engine's dependencies (aho-corasick …)
	CatCxxStd    = "libstdc++, libgcc"     // C++ runtime: strings, operator new, dynamic_cast
	CatLibc      = "libc, libm, ld.so"     // C library (memcpy, tolower …) and the dynamic loader
	CatMeter     = "meter (measuring aid)" // filters/meter's forwarding, not part of a deployment
	CatOther     = "other"                 // nothing above: named in the account so nothing is dropped
)

// Categories is every category in report order.
var Categories = []string{CatModule, CatCgo, CatCallbacks, CatAlloc, CatOwnAlloc, CatEnvoy, CatEngine, CatRegex,
	CatGoRuntime, CatGoStd, CatGoDeps, CatCxxStd, CatLibc, CatMeter, CatOther}

// Glue is the categories that are our integration's cost rather than the
// engine's or Envoy's: our module's code, cgo's crossings and Envoy's work
// answering the module's ABI callbacks.
var Glue = []string{CatModule, CatCgo, CatCallbacks}

// envoyAlloc is the allocator entry points Envoy's binary exports (its
// tcmalloc); the stripped binary names nothing else of it.
var envoyAlloc = map[string]bool{"malloc": true, "free": true, "calloc": true, "realloc": true,
	"memalign": true, "posix_memalign": true, "aligned_alloc": true, "valloc": true, "pvalloc": true,
	"reallocarray": true, "malloc_usable_size": true, "__libc_malloc": true, "__libc_free": true,
	"__libc_calloc": true, "__libc_realloc": true, "__libc_memalign": true,
	"operator new(unsigned long)": false} // libstdc++'s operator new calls malloc: it is libstdc++'s

// Account splits a profile of instructions inside the module's hooks (the
// first window less the second, Profile.Sub) into Categories: each
// function's self cost goes to one category and the categories sum to the
// profile's self total. Envoy's binary is stripped: beyond the allocator's
// and the ABI callbacks' exported names its code is "0x…" (and, where
// Envoy moved its hot text, object "???"); such unnamed code goes to the
// category of the caller that spent most on it, followed up through
// unnamed callers. Object "???" code reached from PCRE2 is its JIT code.
func Account(p *Profile) map[string]int64 {
	c := newClassifier(p)
	acc := map[string]int64{}
	for s, v := range p.Self {
		acc[c.category(s)] += v
	}
	for k, v := range acc {
		if v == 0 {
			delete(acc, k)
		}
	}
	return acc
}

type classifier struct {
	p       *Profile
	goObj   map[string]bool          // objects holding Go code
	jit     map[Symbol]bool          // "???" code reached from PCRE2
	callers map[Symbol][]weightedSym // positive call edges into each function
	memo    map[Symbol]string
}

type weightedSym struct {
	s Symbol
	v int64
}

func newClassifier(p *Profile) *classifier {
	c := &classifier{p: p, goObj: map[string]bool{}, jit: map[Symbol]bool{}, callers: map[Symbol][]weightedSym{}, memo: map[Symbol]string{}}
	for s := range p.Self {
		if strings.HasPrefix(baseName(s.Function), "runtime.") {
			c.goObj[s.Object] = true
		}
	}
	callees := map[Symbol][]Symbol{}
	for e, v := range p.Calls {
		if v > 0 {
			c.callers[e.Callee] = append(c.callers[e.Callee], weightedSym{e.Caller, v})
		}
		callees[e.Caller] = append(callees[e.Caller], e.Callee)
	}
	for _, ws := range c.callers {
		slices.SortFunc(ws, func(a, b weightedSym) int {
			if a.v != b.v {
				return cmp.Compare(b.v, a.v) // costliest first
			}
			return cmp.Or(strings.Compare(a.s.Object, b.s.Object), strings.Compare(a.s.Function, b.s.Function))
		})
	}
	// JIT code: unnamed "???" functions reached from PCRE2 through unnamed
	// "???" callees (Envoy's moved text holds the named allocator entries
	// PCRE2 also calls).
	var queue []Symbol
	for e := range p.Calls {
		if isPCRE(e.Caller.Object) && unnamedUnmapped(e.Callee) && !c.jit[e.Callee] {
			c.jit[e.Callee] = true
			queue = append(queue, e.Callee)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, t := range callees[s] {
			if unnamedUnmapped(t) && !c.jit[t] {
				c.jit[t] = true
				queue = append(queue, t)
			}
		}
	}
	return c
}

// baseName is a function's name without callgrind's recursion-depth
// suffix ("f'2").
func baseName(fn string) string {
	if i := strings.LastIndexByte(fn, '\''); i > 0 && i < len(fn)-1 && strings.Trim(fn[i+1:], "0123456789") == "" {
		return fn[:i]
	}
	return fn
}

func unnamedUnmapped(s Symbol) bool {
	return s.Object == "???" && strings.HasPrefix(s.Function, "0x")
}

func isPCRE(obj string) bool { return strings.HasPrefix(filepath.Base(obj), "libpcre") }

// isEnvoy reports whether s is Envoy's code: in its binary, or unmapped
// ("???", Envoy's hot text moved off its file) and not PCRE2's JIT code.
func (c *classifier) isEnvoy(s Symbol) bool {
	return filepath.Base(s.Object) == "envoy" || (s.Object == "???" && !c.jit[s])
}

func (c *classifier) category(s Symbol) string {
	if got, ok := c.memo[s]; ok {
		return got
	}
	c.memo[s] = CatEnvoy // a cycle of unnamed callers ends here
	got := c.classify(s)
	c.memo[s] = got
	return got
}

func (c *classifier) classify(s Symbol) string {
	fn, obj := baseName(s.Function), filepath.Base(s.Object)
	switch {
	case c.isEnvoy(s):
		switch {
		case envoyAlloc[fn]:
			return CatAlloc
		case strings.HasPrefix(fn, "envoy_dynamic_module_callback_"):
			return CatCallbacks
		case strings.HasPrefix(fn, "0x") || fn == "":
			// Unnamed: the category of its costliest caller, when that is
			// the allocator or a callback (directly or through unnamed
			// Envoy code).
			for _, w := range c.callers[s] {
				if w.s == s {
					continue
				}
				if c.isEnvoy(w.s) {
					if got := c.category(w.s); got == CatAlloc || got == CatCallbacks {
						return got
					}
				}
				return CatEnvoy
			}
		}
		return CatEnvoy
	case c.jit[s], isPCRE(s.Object):
		return CatRegex
	case strings.HasPrefix(obj, "libwafbench_meter"):
		return CatMeter
	case c.goObj[s.Object]:
		return goCategory(fn)
	case strings.HasPrefix(obj, "libwafbench_"):
		return cxxModuleCategory(fn)
	case strings.HasPrefix(obj, "libmodsecurity"):
		return CatEngine
	case strings.HasPrefix(obj, "libstdc++"), strings.HasPrefix(obj, "libgcc_s"):
		return CatCxxStd
	case strings.HasPrefix(obj, "libc.so"), strings.HasPrefix(obj, "libm.so"), strings.HasPrefix(obj, "ld-linux"):
		return CatLibc
	}
	return CatOther
}

// cxxModuleCategory classifies a function of the C++ module's object. A
// static build (filters/builds.yaml link: static) links libmodsecurity into
// it, and one with allocator: mimalloc and libstdc++ too, and every module
// holds the libstdc++ templates it instantiates: those go where the same
// code goes from its own library (engine, libstdc++) or to the module's
// allocator, by name (the perf account's rules, driver/account); the rest
// is our module's.
func cxxModuleCategory(fn string) string {
	switch {
	case account.IsPrivateAlloc(fn):
		return CatOwnAlloc
	case account.IsEngine(fn):
		return CatEngine
	case slices.ContainsFunc(cxxStdPrefixes, func(p string) bool { return strings.HasPrefix(fn, p) }):
		return CatCxxStd
	}
	return CatModule
}

// cxxStdPrefixes: the C++ standard library and runtime, instantiated or
// linked statically into the module.
var cxxStdPrefixes = []string{"std::", "__gnu_cxx::", "operator new", "operator delete", "__cxa_", "__cxxabiv1::",
	"_Unwind_", "__dynamic_cast", "void std::", "bool std::", "int std::", "unsigned long std::"}

// cgoPrefixes are the Go module's functions that cross between C and Go:
// cgo's generated stubs (_cgo_…, _cgoexp_…, main._Cfunc_…, the C-side
// exports envoy_dynamic_module_on_…) and the runtime's transitions.
var cgoPrefixes = []string{"_cgo", "x_cgo", "crosscall", "main._Cfunc_", "envoy_dynamic_module_on_",
	"runtime.cgo", "runtime.asmcgocall", "runtime.entersyscall", "runtime.exitsyscall", "runtime.reentersyscall",
	"runtime.needm", "runtime.dropm", "runtime/cgo.", "gosave_systemstack_switch", "runtime.load_g", "runtime.save_g"}

// goRuntime are Go runtime functions outside package runtime: the map
// implementation, hashing and memory primitives written in assembly, the
// runtime's generator and generated type equality.
var goRuntime = []string{"runtime.", "internal/runtime/", "internal/bytealg.", "internal/abi.", "internal/chacha8rand.",
	"aeshash", "memeqbody", "indexbytebody", "indexbody", "countbody", "cmpbody", "type:", "gcWriteBarrier", "sync/atomic."}

// goCategory classifies a function of the Go module by its symbol.
func goCategory(fn string) string {
	has := func(prefixes []string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(fn, p) })
	}
	switch {
	case has(cgoPrefixes):
		return CatCgo
	case strings.HasPrefix(fn, "main."), strings.HasPrefix(fn, "wafbench/"):
		return CatModule
	case strings.HasPrefix(fn, "github.com/corazawaf/"):
		return CatEngine
	case strings.HasPrefix(fn, "regexp.") || strings.HasPrefix(fn, "regexp/"):
		return CatRegex
	case has(goRuntime):
		return CatGoRuntime
	}
	if i := strings.IndexByte(fn, '/'); i > 0 && strings.Contains(fn[:i], ".") && !strings.ContainsAny(fn[:i], "(*[") {
		return CatGoDeps // a module path: github.com/…, golang.org/x/…, rsc.io/…
	}
	if strings.IndexByte(fn, '.') > 0 {
		return CatGoStd // package.Symbol with a standard-library path
	}
	return CatOther
}
