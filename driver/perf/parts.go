package perf

import (
	"strings"
)

// A profile of an external mode covers two processes, Envoy and the
// wafbench-extproc server beside it (perf record -p with both pids).
// Parts splits its CPU by where it went: Envoy, and in the server the WAF
// engine, gRPC with its HTTP/2 transport, protobuf encoding, the server's
// own code, and the Go runtime, libc and kernel under none of them.
const (
	PartEnvoy    = "Envoy"
	PartEngine   = "server: WAF engine"
	PartGRPC     = "server: gRPC and HTTP/2"
	PartProtobuf = "server: protobuf"
	PartGlue     = "server: wafbench-extproc's own code"
	PartRuntime  = "server: Go runtime, libc, kernel"
)

// PartOrder lists the parts in the order a report shows them.
var PartOrder = []string{PartEnvoy, PartEngine, PartGRPC, PartProtobuf, PartGlue, PartRuntime}

// serverComm is the start of the server's threads' name as perf records
// it: the kernel keeps 15 bytes of "wafbench-extproc".
const serverComm = "wafbench-extpro"

// framePart tells a server frame's part; "" for a frame that decides
// nothing (the Go runtime, libc, the kernel, the standard library), whose
// caller then decides. Checked in order: the first prefix or substring that
// matches wins.
func framePart(frame string) string {
	switch {
	case strings.HasPrefix(frame, "google.golang.org/protobuf/"):
		return PartProtobuf
	case strings.HasPrefix(frame, "google.golang.org/grpc"), strings.HasPrefix(frame, "golang.org/x/net/http2"):
		return PartGRPC
	case strings.HasPrefix(frame, "github.com/corazawaf/"), strings.HasPrefix(frame, "wafbench/filters/coraza/"),
		strings.Contains(frame, "modsecurity::"), strings.HasPrefix(frame, "msc_"), strings.HasPrefix(frame, "pcre"),
		strings.HasPrefix(frame, "wafbench_msc_"), strings.HasPrefix(frame, "wafbench::modsec::"):
		// The engine and the engine code our modules run in Envoy too
		// (filters/coraza/stream, filters/modsecurity's C API).
		return PartEngine
	case strings.HasPrefix(frame, "main."), strings.HasPrefix(frame, "wafbench/filters/extproc"):
		return PartGlue
	}
	return ""
}

// Parts returns the CPU weight of each part of f (see PartOrder); a stack
// whose root frame is not a server thread is Envoy's. A server stack is
// given to the part of the frame nearest its leaf that decides one: an
// allocation under protobuf's unmarshalling is protobuf's, a regular
// expression the engine runs is the engine's.
func (f Folded) Parts() map[string]int64 {
	out := map[string]int64{}
	for s, n := range f {
		out[stackPart(s)] += n
	}
	return out
}

func stackPart(stack string) string {
	frames := strings.Split(stack, ";")
	if !strings.HasPrefix(frames[0], serverComm) {
		return PartEnvoy
	}
	for i := len(frames) - 1; i > 0; i-- {
		if p := framePart(frames[i]); p != "" {
			return p
		}
	}
	// In the server only the engine runs C and C++ code (libmodsecurity,
	// PCRE, libc under them), and those libraries are built without frame
	// pointers: their stacks break after a frame or two, before any frame
	// that names the engine. A stack with such a frame is the engine's.
	for _, fr := range frames[1:] {
		if isEngineC(fr) {
			return PartEngine
		}
	}
	return PartRuntime
}

// isEngineC reports whether frame is user-space C or C++ code of the
// kind libmodsecurity runs: its libraries, the C++ runtime, libc's
// allocator, string and character functions, or a frame perf could not
// name ("[unknown]"; Go's frames always have names).
func isEngineC(frame string) bool {
	for _, p := range []string{"[unknown]", "[libpcre", "[libmodsecurity", "[libstdc++", "[libgcc", "[libxml", "[libyajl",
		"std::", "operator new", "operator delete", "malloc", "_int_malloc", "_int_free", "cfree", "free", "unlink_chunk",
		"tolower", "toupper", "__memmove", "__memcpy", "__memset", "__strcmp", "__strlen", "__memchr", "__dynamic_cast", "__cxa_"} {
		if strings.HasPrefix(frame, p) {
			return true
		}
	}
	return false
}
