package account

import (
	"testing"

	"wafbench/driver/perf"
)

// Stacks below are real folded lines (counts removed) from the committed
// flame run, results/20261201T014733Z-flame/perf/t0*-<mode>-<workload>.folded.gz
// (retired to git history; results/README.md, "Retired runs").
func TestClassify(t *testing.T) {
	tests := []struct {
		name, stack string
		want        Part
		why         string
	}{
		{"passthrough complete Envoy stack", "wrk:worker_0;start_thread;[envoy];[envoy];[envoy];[envoy]", Envoy, ByThreadRoot},
		{"passthrough send cut at glibc's wrapper", "wrk:worker_0;__send;entry_SYSCALL_64_after_hwframe;do_syscall_64;__x64_sys_sendto;__sys_sendto;tcp_sendmsg;_raw_spin_unlock_bh", Envoy, ByIOWrapper},
		{"modsecurity engine on a cut stack", "wrk:worker_0;[unknown];[unknown];modsecurity::RuleWithOperator::evaluate", Engine, ByWAFFrame},
		{"modsecurity unsymbolised engine", "wrk:worker_0;[libmodsecurity.so.3.0.9]", Engine, ByWAFFrame},
		{"modsecurity yajl", "wrk:worker_0;[libyajl.so.2.1.0]", Engine, ByWAFFrame},
		{"modsecurity Envoy frame under an engine frame", "wrk:worker_0;[unknown];[unknown];modsecurity::Transaction::~Transaction;[envoy]", Alloc, ByWAFFrame},
		{"modsecurity tcmalloc through Envoy's malloc", "wrk:worker_0;[unknown];[unknown];[unknown];[unknown];[unknown];operator new;malloc;[envoy]", Alloc, ByWAFFrame},
		{"modsecurity free", "wrk:worker_0;[unknown];[unknown];modsecurity::RuleWithActions::containsTag;free;[envoy]", Alloc, ByWAFFrame},
		{"modsecurity operator delete PLT", "wrk:worker_0;[unknown];[unknown];operator delete@plt", Alloc, ByWAFFrame},
		{"a build's private mimalloc", "wrk:worker_0;envoy_dynamic_module_on_http_filter_request_headers;modsecurity::Transaction::processURI;operator new;_mi_malloc_generic;_mi_page_free_collect", Alloc, ByHook},
		{"pcre2 calling malloc", "wrk:worker_0;[unknown];[libpcre2-8.so.0.11.2];[libpcre2-8.so.0.11.2];malloc;[envoy]", Alloc, ByWAFFrame},
		{"pcre2", "wrk:worker_0;[unknown];[libpcre2-8.so.0.11.2]", Regex, ByWAFFrame},
		{"pcre2 JIT code", "wrk:worker_0;[perf-18352.map]", Regex, ByWAFFrame},
		{"free on a cut stack", "wrk:worker_0;[unknown];[unknown];free", Alloc, ByCutStack},
		{"memmove on a cut stack", "wrk:worker_0;[unknown];[unknown];[unknown];__memmove_avx512_unaligned_erms", HookOther, ByCutStack},
		{"libstdc++ on a cut stack", "wrk:worker_0;[unknown];[unknown];std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_append", HookOther, ByWAFFrame},
		{"our C++ module", "wrk:worker_0;[unknown];wafbench::modsec::(anonymous namespace)::Filter::OnRequestHeaders", Module, ByWAFFrame},
		{"ABI callback from the C++ module", "wrk:worker_0;[unknown];wafbench::modsec::(anonymous namespace)::Filter::OnRequestHeaders;envoy_dynamic_module_callback_http_get_headers;[envoy]", ABI, ByWAFFrame},
		{"kernel under the engine", "wrk:worker_0;[unknown];[unknown];[unknown];[perf-18352.map];asm_sysvec_apic_timer_interrupt;irqentry_exit_to_user_mode", Kernel, ByWAFFrame},
		{"kernel marked by inferno --kernel", "wrk:worker_0;envoy_dynamic_module_on_http_filter_request_headers;runtime.mallocgc;asm_exc_page_fault_[k];exc_page_fault_[k]", Kernel, ByHook},
		{"Envoy kernel marked", "wrk:worker_0;start_thread;[envoy];epoll_wait;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k]", Envoy, ByThreadRoot},
		{"Go module's own code", "wrk:worker_0;envoy_dynamic_module_on_http_filter_stream_complete;[unknown];crosscall2;runtime.cgocallback.abi0;runtime.cgocallbackg.abi0;runtime.cgocallbackg;runtime.cgocallbackg1;_cgoexp_ea9e630dd3c6_envoy_dynamic_module_on_http_filter_stream_complete;main.envoy_dynamic_module_on_http_filter_stream_complete;wafbench/filters/coraza/stream.(*Stream).Log", Module, ByHook},
		{"Go allocation in our module", "wrk:worker_0;envoy_dynamic_module_on_http_filter_request_headers;[unknown];crosscall2;runtime.cgocallback.abi0;runtime.cgocallbackg.abi0;runtime.cgocallbackg;runtime.cgocallbackg1;_cgoexp_ea9e630dd3c6_envoy_dynamic_module_on_http_filter_request_headers;main.envoy_dynamic_module_on_http_filter_request_headers;main.(*filter).onRequestHeaders;runtime.makeslice", Alloc, ByHook},
		{"cgo checks entering a Go hook", "wrk:worker_0;[unknown];[envoy];[unknown];envoy_dynamic_module_on_http_filter_new;[unknown];crosscall2;runtime.cgocallback.abi0;runtime.cgocallbackg.abi0;runtime.cgocallbackg;runtime.cgocallbackg1;_cgoexp_ea9e630dd3c6_envoy_dynamic_module_on_http_filter_new;main.envoy_dynamic_module_on_http_filter_new;runtime.cgoCheckPointer;runtime.cgoCheckArg;runtime.inHeapOrStack", ABI, ByHook},
		{"Coraza engine", "wrk:worker_0;envoy_dynamic_module_on_http_filter_request_headers;[unknown];crosscall2;runtime.cgocallback.abi0;runtime.cgocallbackg.abi0;runtime.cgocallbackg;runtime.cgocallbackg1;_cgoexp_ea9e630dd3c6_envoy_dynamic_module_on_http_filter_request_headers;main.envoy_dynamic_module_on_http_filter_request_headers;main.(*filter).onRequestHeaders;wafbench/filters/coraza/stream.(*Stream).RequestHeaders;wafbench/filters/coraza/engine.(*Tx).ProcessRequestHeaders;github.com/corazawaf/coraza/v3/internal/corazawaf.(*Transaction).ProcessRequestHeaders;github.com/corazawaf/coraza/v3/internal/corazawaf.(*RuleGroup).Eval;github.com/corazawaf/coraza/v3/internal/corazawaf.(*Rule).doEvaluate", Engine, ByHook},
		{"Coraza's helper in the Go library", "wrk:worker_0;envoy_dynamic_module_on_http_filter_request_headers;[unknown];crosscall2;runtime.cgocallback.abi0;runtime.cgocallbackg.abi0;runtime.cgocallbackg;runtime.cgocallbackg1;_cgoexp_ea9e630dd3c6_envoy_dynamic_module_on_http_filter_request_headers;main.envoy_dynamic_module_on_http_filter_request_headers;github.com/corazawaf/coraza/v3/internal/corazawaf.(*Rule).doEvaluate;strings.ToLower", Engine, ByHook},
		{"Go regexp", "wrk:worker_0;envoy_dynamic_module_on_http_filter_request_body;[unknown];crosscall2;runtime.cgocallback.abi0;github.com/corazawaf/coraza/v3/internal/operators.(*rx).Evaluate;regexp.(*Regexp).doExecute;regexp.(*Regexp).tryBacktrack", Regex, ByHook},
		{"Go GC worker", "envoy;runtime.goexit.abi0;runtime.gcBgMarkStartWorkers.gowrap1;runtime.gcBgMarkWorker;runtime.systemstack.abi0;runtime.gcBgMarkWorker.func2;runtime.gcDrain;runtime.scanObject", Runtime, ByGoThread},
		{"nothing but the thread name", "wrk:worker_0", Unattributed, ByNothing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := classify(tt.stack)
			if got != tt.want || why != tt.why {
				t.Errorf("Classify = %v (%s), want %v (%s)", got, why, tt.want, tt.why)
			}
		})
	}
}

func TestOf(t *testing.T) {
	f := perf.Folded{
		"wrk:worker_0;start_thread;[envoy];[envoy]":                      600,
		"wrk:worker_0;[unknown];modsecurity::RuleWithOperator::evaluate": 300,
		"wrk:worker_0;[unknown];operator new;malloc;[envoy]":             100,
	}
	a := Of(f)
	if got, want := a.Total(), int64(1000); got != want {
		t.Errorf("Total = %d, want %d", got, want)
	}
	if got, want := a.hooks(), int64(400); got != want {
		t.Errorf("Hooks = %d, want %d", got, want)
	}
	if got, want := a.Share(Engine), 0.3; got != want {
		t.Errorf("Share(Engine) = %v, want %v", got, want)
	}
	if got, want := a.Rules[ByWAFFrame], int64(400); got != want {
		t.Errorf("Rules[%s] = %d, want %d", ByWAFFrame, got, want)
	}
	if (account{}).Share(Envoy) != 0 {
		t.Error("Share of an empty account is not 0")
	}
}

// TestAlone places the samples of an engine benchmark's profile: the
// engine, PCRE2's JIT code, Debian's tcmalloc, a libc helper, the kernel,
// and Go's GC worker (Runtime, as on Envoy's Go threads) — none of them
// "Envoy" or "unattributed", though no hook is on any stack — and leaves
// out the untimed work between requests.
func TestAlone(t *testing.T) {
	f := perf.Folded{
		"modsecurity-en;runtime.goexit.abi0;testing.(*B).run1.func1;wafbench/filters/modsecurity/bench.(*Engine).Evaluate;runtime.cgocall;wafbench_msc_engine_evaluate;modsecurity::RuleWithOperator::evaluate": 500,
		"modsecurity-en;[unknown];modsecurity::Utils::Regex::searchAll;[perf-1234.map]":                                                                             100,
		"modsecurity-en;[unknown];operator new;tc_malloc;tcmalloc::ThreadCache::FetchFromCentralCache":                                                              150,
		"modsecurity-en;[unknown];__strcmp_evex":                                                                                                                    80,
		"modsecurity-en;[unknown];modsecurity::Transaction::Transaction;__GI___getrandom;entry_SYSCALL_64_[k];do_syscall_64_[k]":                                    20,
		"coraza-engine.t;runtime.goexit.abi0;runtime.gcBgMarkWorker;runtime.gcDrain;runtime.scanobject":                                                             150,
		"coraza-engine.t;runtime.goexit.abi0;testing.(*B).run1.func1;wafbench/filters/coraza/engine.BenchmarkEngine.func1;wafbench/tests/enginebench.Touch":         400,
		"coraza-engine.t;runtime.goexit.abi0;wafbench/filters/coraza/engine.BenchmarkEngine.func1;testing.(*B).StopTimer;runtime.ReadMemStats;runtime.stopTheWorld": 50,
	}
	a := Alone(f)
	want := map[Part]int64{Engine: 500, Regex: 100, Alloc: 150, HookOther: 80, Kernel: 20, Runtime: 150}
	for p := range NParts {
		if got := a.Parts[p]; got != want[Part(p)] {
			t.Errorf("%s: got %d, want %d", Part(p), got, want[Part(p)])
		}
	}
	if a.Rules[ByAlone] != a.Total() || a.Rules[ByUntimed] != 450 {
		t.Errorf("rules %v: want every part's sample %q, the cold buffer's writes and the timer's stop (450) %q", a.Rules, ByAlone, ByUntimed)
	}
}
