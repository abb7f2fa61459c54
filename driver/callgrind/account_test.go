package callgrind

import (
	"maps"
	"testing"
)

// TestAccount classifies one function of each kind a dump of the C++ and
// the Go module holds, unnamed Envoy code by its costliest caller and
// unmapped code reached from PCRE2 as its JIT code, and checks that the
// categories sum to the profile.
func TestAccount(t *testing.T) {
	const (
		envoy  = "/x/envoy"
		moved  = "???"
		cxxMod = "/b/libwafbench_modsecurity.so"
		goMod  = "/b/libwafbench_coraza.so"
	)
	sym := func(ob, fn string) Symbol { return Symbol{ob, fn} }
	malloc, inner := sym(moved, "malloc"), sym(moved, "0x0000000006290000")
	cb, cbInner := sym(envoy, "envoy_dynamic_module_callback_http_get_headers"), sym(envoy, "0x0000000004000000")
	loop := sym(envoy, "0x0000000005000000")
	pcre, jit, jit2 := sym("/l/libpcre2-8.so.0", "pcre2_jit_match_8"), sym(moved, "0x000000000c000000"), sym(moved, "0x000000000c001000")
	cases := map[Symbol]string{
		sym(cxxMod, "wafbench::modsec::Filter::OnRequestHeaders(bool)"): CatModule,
		// A static build's module object: engine, libstdc++, mimalloc.
		sym(cxxMod, "modsecurity::operators::Pm::evaluate(modsecurity::Transaction*)"): CatEngine,
		sym(cxxMod, "libinjection_sqli"):                                               CatEngine,
		sym(cxxMod, "std::__cxx11::basic_string<char>::_M_mutate(unsigned long)"):      CatCxxStd,
		sym(cxxMod, "operator new(unsigned long)"):                                     CatCxxStd,
		sym(cxxMod, "_mi_malloc_generic"):                                              CatOwnAlloc,
		sym(cxxMod, "mi_free"):                                                         CatOwnAlloc,
		sym("/l/libmodsecurity.so.3.0.9", "modsecurity::RulesSet::evaluate"):           CatEngine,
		pcre: CatRegex, jit: CatRegex, jit2: CatRegex,
		sym("/l/libstdc++.so.6.0.30", "operator new(unsigned long)"):              CatCxxStd,
		sym("/l/libc.so.6", "__memcpy_avx_unaligned_erms"):                        CatLibc,
		sym("/l/libyajl.so.2", "yajl_parse"):                                      CatOther,
		sym("/b/libwafbench_meter.so", "envoy_dynamic_module_on_http_filter_new"): CatMeter,
		malloc: CatAlloc, inner: CatAlloc, cb: CatCallbacks, cbInner: CatCallbacks, loop: CatEnvoy,
		sym(goMod, "runtime.mallocgc"):                                                       CatGoRuntime,
		sym(goMod, "internal/runtime/maps.(*Map).getWithoutKeySmallFastStr"):                 CatGoRuntime,
		sym(goMod, "aeshashbody"):                                                            CatGoRuntime,
		sym(goMod, "runtime.cgocallbackg'2"):                                                 CatCgo,
		sym(goMod, "_cgo_d84467ef5060_Cfunc_envoy_dynamic_module_callback_http_get_headers"): CatCgo,
		sym(goMod, "main._Cfunc_wb_ptr_handle.abi0"):                                         CatCgo,
		sym(goMod, "envoy_dynamic_module_on_http_filter_new"):                                CatCgo,
		sym(goMod, "main.(*filter).onRequestHeaders'2"):                                      CatModule,
		sym(goMod, "wafbench/filters/coraza/engine.MapHeaders"):                              CatModule,
		sym(goMod, "github.com/corazawaf/coraza/v3/internal/corazawaf.(*Rule).doEvaluate"):   CatEngine,
		sym(goMod, "github.com/corazawaf/libinjection-go.IsSQLi"):                            CatEngine,
		sym(goMod, "regexp.(*Regexp).tryBacktrack"):                                          CatRegex,
		sym(goMod, "strings.ToLower"):                                                        CatGoStd,
		sym(goMod, "net/netip.ParseAddr"):                                                    CatGoStd,
		sym(goMod, "github.com/petar-dambovaliev/aho-corasick.findAtNoState"):                CatGoDeps,
		sym(goMod, "sync.(*Pool).Get[go.shape.*github.com/x/y.T]"):                           CatGoStd,
	}
	p := &Profile{Self: map[Symbol]int64{}, Calls: map[Call]int64{
		{malloc, inner}: 50,
		{sym(envoy, "0x0000000007000000"), inner}: 10, // a cheaper caller does not decide
		{cb, cbInner}:                            20,
		{cbInner, loop}:                          1, // an unnamed callee of unnamed code follows it …
		{sym(envoy, "0x0000000003000000"), loop}: 9, // … unless another caller spent more
		{pcre, jit}:                              30,
		{jit, jit2}:                              3,
		{pcre, malloc}:                           4, // named moved code is Envoy's, not JIT
	}}
	want := map[string]int64{}
	var n int64
	for s, cat := range cases {
		n++
		p.Self[s] = n
		want[cat] += n
	}
	p.Total = p.SelfSum()
	got := Account(p)
	if !maps.Equal(got, want) {
		for s, cat := range cases {
			c := newClassifier(p)
			if g := c.category(s); g != cat {
				t.Errorf("%v: got %q, want %q", s, g, cat)
			}
		}
		t.Fatalf("got %v, want %v", got, want)
	}
	var sum int64
	for _, c := range Categories {
		sum += got[c]
	}
	if sum != p.Total {
		t.Fatalf("categories sum to %d, profile totals %d (categories %v)", sum, p.Total, got)
	}
}
