package perf

import "strings"

// The profile of a Coraza host, Envoy with our Go module or Caddy with
// our handler, split the same way for both, so that the engine's cost and
// the host's own can be set side by side: what the engine costs in each
// host, what the integration between them costs, the Go runtime's
// background work, and the host's own serving (HTTP, proxying, event loop),
// split into its user-space code and the kernel's work under it.
const (
	HostPartEngine     = "WAF engine"
	HostPartGlue       = "integration"
	HostPartRuntime    = "Go GC and sysmon"
	HostPartHost       = "host's own, user space"
	HostPartHostKernel = "host's own, kernel"
)

// HostPartOrder lists the host parts in the order a report shows them.
var HostPartOrder = []string{HostPartEngine, HostPartGlue, HostPartRuntime, HostPartHost, HostPartHostKernel}

// HostParts returns the CPU weight of each host part of f (HostPartOrder).
// A stack belongs to the part of the frame nearest its leaf that decides
// one: the engine (Coraza, our engine package), the integration (the
// module's hooks and cgo's crossings in Envoy, our handler in Caddy), the
// host's own serving (Caddy's modules, net/http, net's connections), or the
// root of one of the Go runtime's background threads (collector, monitor).
// Frames that decide nothing (the Go runtime, the standard library, libc,
// the kernel, Envoy's stripped frames) leave it to their callers, so an
// allocation under the engine is the engine's, an ABI callback into Envoy
// under a hook the integration's, and the proxying our Caddy handler calls
// the host's. A stack no frame decides is the host's: Envoy's own, and Go's
// scheduler, which in Caddy is the event loop as Envoy's is Envoy's. The
// host's samples are the kernel's when the stack passes a kernel entry (a
// system call, an interrupt, a fault), else its user space's.
func (f Folded) HostParts() map[string]int64 {
	out := map[string]int64{}
	for s, n := range f {
		out[hostStackPart(s)] += n
	}
	return out
}

func hostStackPart(stack string) string {
	frames := strings.Split(stack, ";")
	part := HostPartHost
	for i := len(frames) - 1; i > 0; i-- { // frames[0] is the thread's name
		if p := hostFramePart(frames[i]); p != "" {
			part = p
			break
		}
	}
	if part == HostPartHost && inKernel(frames) {
		return HostPartHostKernel
	}
	return part
}

// inKernel reports whether a stack's leaf is in the kernel: perf's kernel
// call chain ends, toward the root, in the entry of a system call, an
// interrupt or a fault.
func inKernel(frames []string) bool {
	for _, fr := range frames {
		for _, p := range []string{"entry_SYSCALL", "asm_sysvec_", "asm_common_interrupt", "asm_exc_", "ret_from_fork"} {
			if strings.HasPrefix(fr, p) {
				return true
			}
		}
	}
	return false
}

// hostFramePart tells a frame's host part, "" for one that decides nothing.
func hostFramePart(fr string) string {
	switch {
	case strings.HasPrefix(fr, "github.com/corazawaf/"), strings.HasPrefix(fr, "wafbench/filters/coraza/engine."):
		return HostPartEngine
	case strings.HasPrefix(fr, "envoy_dynamic_module_on_"), fr == "crosscall2", strings.HasPrefix(fr, "runtime.cgocallback"),
		strings.HasPrefix(fr, "main."), strings.HasPrefix(fr, "wafbench/filters/coraza/stream."),
		strings.HasPrefix(fr, "wafbench/filters/caddy-coraza/"):
		return HostPartGlue
	case strings.HasPrefix(fr, "github.com/caddyserver/"), strings.HasPrefix(fr, "net/http."), strings.HasPrefix(fr, "net.(*"):
		// Connections' methods only: the engine calls net's functions
		// too (net.ParseIP for @ipMatch), under its own frames.
		return HostPartHost
	case isRuntimeBackground(fr):
		return HostPartRuntime
	}
	return ""
}

// isRuntimeBackground reports whether frame is the root work of one of the
// Go runtime's background threads or goroutines: the collector's mark
// workers, sweeper and scavenger, and the monitor thread.
func isRuntimeBackground(frame string) bool {
	for _, p := range []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge", "runtime.sysmon"} {
		if strings.HasPrefix(frame, p) {
			return true
		}
	}
	return false
}
