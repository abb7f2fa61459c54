package perf

import "testing"

// TestHostParts: a stack belongs to the host part of the frame nearest its
// leaf that decides one, and to the host when none does; the same engine
// frames count as the engine's in Envoy and in Caddy.
func TestHostParts(t *testing.T) {
	f := Folded{
		// Envoy's own work, its stripped frames and the kernel under them.
		"wrk:worker_0;start_thread;[envoy];[envoy]":                        100,
		"wrk:worker_0;__send;entry_SYSCALL_64_after_hwframe;do_syscall_64": 20,
		// An interrupt's work in Envoy's thread: the kernel's too.
		"wrk:worker_0;start_thread;[envoy];asm_sysvec_apic_timer_interrupt;irqentry_exit_to_user_mode;schedule": 7,
		// The engine under a hook, an allocation under the engine.
		"wrk:worker_0;envoy_dynamic_module_on_http_filter_request_headers;crosscall2;runtime.cgocallback;main.envoy_dynamic_module_on_http_filter_request_headers;wafbench/filters/coraza/stream.(*Stream).RequestHeaders;github.com/corazawaf/coraza/v3/internal/corazawaf.(*Transaction).ProcessRequestHeaders;runtime.mallocgc": 50,
		// An ABI callback into Envoy under a hook: the integration's.
		"wrk:worker_0;envoy_dynamic_module_on_http_filter_request_headers;crosscall2;runtime.cgocallback;main.envoy_dynamic_module_on_http_filter_request_headers;runtime.cgocall;[envoy]": 4,
		// The Go runtime's background threads, in Envoy (named envoy) and Caddy.
		"envoy;runtime.goexit.abi0;runtime.gcBgMarkWorker;runtime.scanobject": 6,
		"caddy;runtime.mstart.abi0;runtime.mstart1;runtime.sysmon;usleep":     3,
		// Caddy: the engine under our handler, the proxying our handler calls
		// the host's, our handler's own code the integration's.
		"caddy;runtime.goexit.abi0;net/http.(*conn).serve;wafbench/filters/caddy-coraza/caddywaf.(*handler).inspect;wafbench/filters/coraza/engine.(*Tx).ProcessRequestHeaders;regexp.(*Regexp).doExecute":                                                              40,
		"caddy;runtime.goexit.abi0;net/http.(*conn).serve;wafbench/filters/caddy-coraza/caddywaf.(*handler).ServeHTTP;github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy.(*Handler).ServeHTTP;net.(*conn).Write;entry_SYSCALL_64_after_hwframe;tcp_sendmsg": 30,
		"caddy;runtime.goexit.abi0;net/http.(*conn).serve;wafbench/filters/caddy-coraza/caddywaf.(*handler).ServeHTTP;runtime.newobject":                                                                                                                                2,
		// A net function under the engine: the engine's.
		"caddy;runtime.goexit.abi0;net/http.(*conn).serve;wafbench/filters/caddy-coraza/caddywaf.(*handler).inspect;github.com/corazawaf/coraza/v3/internal/operators.(*ipMatch).Evaluate;net.ParseIP": 5,
		// Go's scheduler: the host's (Caddy's event loop).
		"caddy;runtime.mcall;runtime.park_m;runtime.schedule;runtime.findRunnable;runtime.netpoll;epoll_wait": 8,
	}
	got := f.HostParts()
	want := map[string]int64{HostPartEngine: 95, HostPartGlue: 6, HostPartRuntime: 9, HostPartHost: 108, HostPartHostKernel: 57}
	for _, p := range HostPartOrder {
		if got[p] != want[p] {
			t.Errorf("%s: %d, want %d", p, got[p], want[p])
		}
	}
	if len(got) != len(want) {
		t.Errorf("parts %v, want %v", got, want)
	}
}
