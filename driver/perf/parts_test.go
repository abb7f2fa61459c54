package perf

import "testing"

// TestParts: a stack is Envoy's unless its root frame is a server thread;
// a server stack belongs to the part of the frame nearest its leaf that
// decides one, the runtime's when none does.
func TestParts(t *testing.T) {
	f := Folded{
		"wrk:worker_0;Envoy::Http::FilterManager::decodeHeaders;memcpy":                                                                                                                                                100,
		"wafbench-extpro;runtime.goexit;google.golang.org/grpc.(*Server).handleStream;google.golang.org/protobuf/proto.Unmarshal;runtime.mallocgc":                                                                     7,
		"wafbench-extpro;runtime.goexit;google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders;syscall.Syscall":                                                                                       5,
		"wafbench-extpro;runtime.goexit;wafbench/filters/extproc/waf.(*corazaStream).RequestHeaders;github.com/corazawaf/coraza/v3/internal/corazawaf.(*Transaction).ProcessRequestHeaders;regexp.(*Regexp).doExecute": 40,
		"wafbench-extpro;runtime.cgocall;wafbench_msc_tx_uri;modsecurity::Transaction::processURI;pcre2_match_8":                                                                                                       30,
		"wafbench-extpro;runtime.goexit;wafbench/filters/extproc.(*server).Process;runtime.newobject":                                                                                                                  3,
		"wafbench-extpro;[unknown];_int_free":                           11,
		"wafbench-extpro;schedule;__schedule;finish_task_switch.isra.0": 13,
		"wafbench-extpro;runtime.gcBgMarkWorker;runtime.scanobject":     2,
	}
	got := f.Parts()
	want := map[string]int64{PartEnvoy: 100, PartProtobuf: 7, PartGRPC: 5, PartEngine: 81, PartGlue: 3, PartRuntime: 15}
	for _, p := range PartOrder {
		if got[p] != want[p] {
			t.Errorf("%s: %d, want %d", p, got[p], want[p])
		}
	}
	if len(got) != len(want) {
		t.Errorf("parts %v, want %v", got, want)
	}
}
