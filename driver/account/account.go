// Package account splits the CPU of a profiled Envoy into a cost account:
// Envoy's own work outside the WAF hooks, and inside the hooks the engine,
// its regex library, the allocator, our module's own code, the crossings of
// the dynamic-module ABI and the kernel. It works on folded stacks
// (driver/perf), one sample stack at a time, with pure functions: the
// classification rules below are the whole method.
//
// A sample belongs to the hooks when a module hook
// (envoy_dynamic_module_on_…) is on its stack. The official Envoy binary is
// stripped and keeps frame pointers, so its frames fold as "[envoy]" but
// unwind; libmodsecurity, libstdc++ and PCRE2 from Debian keep none, so a
// stack that passes through them is cut short of the hook. Such a stack is
// still the WAF's when it holds a frame only WAF code runs (the engine,
// libstdc++ — Envoy links no libstdc++.so —, the regex library, our module),
// because the modules run only inside the hooks. The stripped Envoy's frames
// are attributed by the call site: an "[envoy]" frame called from an
// allocator entry Envoy exports (malloc, free, …: its tcmalloc) is the
// allocator; one called from the engine or libstdc++ is the allocator too
// (the only Envoy code an engine reaches is the allocator it exports; Lua is
// never enabled); one called from our module or a named ABI callback is an
// ABI callback. What none of this decides is Unattributed.
package account

import (
	"slices"
	"strings"

	"wafbench/driver/perf"
)

// Part is one line of the account.
type Part int

// The parts of the account. Envoy is outside the hooks; Engine … HookOther
// are inside them (HookOther: inside, but the stack names no component —
// only libc helpers on a cut stack); Runtime is work of the WAF's language
// runtime on its own threads, off the hooks (Go's scheduler and background
// GC); Unattributed is what the stack does not place on either side.
const (
	Envoy Part = iota
	Engine
	Regex
	Alloc
	Module
	ABI
	Kernel
	HookOther
	Runtime
	Unattributed
	NParts
)

var partNames = [NParts]string{"envoy", "engine", "regex", "alloc", "module", "abi", "kernel", "hook-other", "runtime", "unattributed"}

// String returns the part's short name.
func (p Part) String() string {
	if p < 0 || p >= NParts {
		return "part?"
	}
	return partNames[p]
}

// InHooks reports whether p is a part inside the WAF hooks.
func (p Part) InHooks() bool { return p >= Engine && p <= HookOther }

// Side says where a sample ran relative to the WAF hooks.
type Side int

// The sides of a sample.
const (
	sideEnvoy   Side = iota // Envoy outside the hooks
	sideHooks               // inside a module hook
	sideRuntime             // the WAF's runtime threads, off the hooks
	sideUnknown             // the stack does not say
)

// Why a sample is on its side, for tests and the report's method note.
const (
	ByHook       = "hook on stack"
	ByWAFFrame   = "WAF frame on a cut stack"
	ByThreadRoot = "complete Envoy stack"
	ByIOWrapper  = "Envoy socket call"
	ByCutStack   = "cut stack"
	ByGoThread   = "Go runtime thread"
	ByNothing    = "undecided"
	ByAlone      = "engine alone" // Alone: every sample is the engine's
	ByUntimed    = "untimed"      // Alone: left out, outside the benchmark's timer
)

// classify returns the part of one folded stack ("comm;root;…;leaf", the
// count already removed) and why its side was chosen.
func classify(stack string) (Part, string) {
	frames := strings.Split(stack, ";")
	if len(frames) > 0 {
		frames = frames[1:] // the thread's name
	}
	if len(frames) == 0 {
		return Unattributed, ByNothing
	}
	k := kernelStart(frames)
	user := frames[:k]
	side, why := side(user)
	switch side {
	case sideEnvoy:
		return Envoy, why
	case sideRuntime:
		return Runtime, why
	case sideUnknown:
		return Unattributed, why
	}
	if k < len(frames) {
		return Kernel, why
	}
	return inside(user), why
}

// side decides where the user-space part of a stack ran.
func side(user []string) (Side, string) {
	waf := false
	for _, f := range user {
		if isHook(f) {
			return sideHooks, ByHook
		}
		if isWAF(f) {
			waf = true
		}
	}
	if len(user) > 0 && isGoThreadRoot(user[0]) {
		return sideRuntime, ByGoThread
	}
	if waf {
		return sideHooks, ByWAFFrame
	}
	if len(user) == 0 {
		return sideUnknown, ByNothing
	}
	if threadRoots[user[0]] {
		return sideEnvoy, ByThreadRoot
	}
	if len(user) == 1 && envoyIO[user[0]] {
		return sideEnvoy, ByIOWrapper
	}
	// A stack cut short of a thread's root passed through code without
	// frame pointers; Envoy keeps them, so its own stacks are complete
	// (passthrough's unwind to a thread root but for about 0.1%: the
	// account reports that rate as the rule's error).
	return sideHooks, ByCutStack
}

// inside attributes a sample inside the hooks to the component running at
// its leaf, walking towards the root past frames that do not own their time
// (libc string functions, libstdc++ and Go library helpers, garbage
// "[unknown]" return addresses of a cut stack) and resolving "[envoy]"
// frames by their caller.
func inside(user []string) Part {
	sawEnvoy := false
	for i := len(user) - 1; i >= 0; i-- {
		f := strings.TrimSuffix(user[i], "@plt")
		switch {
		case f == "[envoy]":
			sawEnvoy = true
		case isAlloc(f):
			return Alloc
		case isABI(f):
			return ABI
		case isHook(f), isModule(f):
			if sawEnvoy {
				return ABI
			}
			return Module
		case sawEnvoy && (IsEngine(f) || isRegex(f) || isCxxRuntime(f) || isLibc(f)):
			return Alloc
		case isRegex(f) || (i == len(user)-1 && isJIT(f)):
			return Regex
		case IsEngine(f):
			return Engine
		}
	}
	if sawEnvoy {
		// Only helpers and Envoy frames above a cut: Envoy code reached
		// from WAF code is the allocator (see the package comment).
		return Alloc
	}
	return HookOther
}

// kernelStart returns the index of a stack's first kernel frame, or
// len(frames). inferno-collapse-perf --kernel marks kernel frames with
// "_[k]"; older folds carry no mark, so the kernel part starts at its entry
// point (a system call, an interrupt or exception, a fresh thread).
func kernelStart(frames []string) int {
	for i, f := range frames {
		if strings.HasSuffix(f, "_[k]") || isKernelEntry(f) {
			return i
		}
	}
	return len(frames)
}

func isKernelEntry(f string) bool {
	return strings.HasPrefix(f, "entry_SYSCALL_64") || strings.HasPrefix(f, "asm_") ||
		strings.HasPrefix(f, "ret_from_fork") || f == "entry_SYSENTER_compat"
}

// isHook: our modules' exported hooks, in C (the C++ module, the C side of
// a cgo export) and in Go (main.envoy_dynamic_module_on_…); Envoy's own
// statically linked modules export theirs under a prefix (hickory_dns_static_).
func isHook(f string) bool {
	i := strings.Index(f, "envoy_dynamic_module_on_")
	return i >= 0 && !strings.Contains(f[:i], "static_")
}

// isABI: a callback into Envoy (named by Envoy's dynamic symbols), the Go
// side of calling one (cgo stubs) and the cgo machinery of entering a Go
// hook from C.
func isABI(f string) bool {
	if strings.Contains(f, "envoy_dynamic_module_callback_") {
		return true
	}
	switch f {
	case "crosscall2", "runtime.cgocall", "runtime.cgocallback.abi0", "runtime.cgocallbackg",
		"runtime.cgocallbackg.abi0", "runtime.cgocallbackg1", "runtime.asmcgocall.abi0",
		"runtime.asmcgocall", "runtime.entersyscall", "runtime.exitsyscall", "runtime.reentersyscall",
		"runtime.cgoCheckPointer", "runtime.cgoCheckArg", "runtime.cgoIsGoPointer",
		"runtime.exitsyscallfast", "runtime.unlockOSThread", "runtime.lockOSThread",
		"_cgo_topofstack", "x_cgo_getstackbound", "_cgo_wait_runtime_init_done":
		return true
	}
	return strings.HasPrefix(f, "_cgoexp_") || strings.HasPrefix(f, "_cgo_") ||
		strings.Contains(f, "._Cfunc_")
}

// isModule: our own module code (C++ namespace wafbench::, the Go module's
// package main and wafbench/filters/… packages, an unsymbolised frame of our
// .so).
func isModule(f string) bool {
	return strings.HasPrefix(f, "wafbench::") || strings.HasPrefix(f, "main.") ||
		strings.HasPrefix(f, "wafbench/") || strings.HasPrefix(f, "[libwafbench_") ||
		strings.HasPrefix(f, "wb_") || strings.HasPrefix(f, "runtime/cgo.")
}

// IsEngine: libmodsecurity (its C++ namespace, its C API and the C code it
// bundles) and its libraries; coraza/v3 and its dependencies.
func IsEngine(f string) bool {
	for _, p := range enginePrefixes {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}

var enginePrefixes = []string{
	"modsecurity::", "msc_", "acmp_", "h5_", "libinjection_", "[libinjection", "mbedtls_", "yajl_", "[libmodsecurity", "[libyajl",
	"[libxml2", "xml", "[libfuzzy", "[libmaxminddb", "[libGeoIP", "[liblua", "[libcurl",
	"github.com/corazawaf/", "github.com/petar-dambovaliev/", "github.com/tidwall/",
	"github.com/valllabh/", "github.com/magefile/", "github.com/jcchavezs/",
	"github.com/kaptinlin/", "github.com/anuraaga/", "github.com/wasilibs/nottinygc",
}

// isRegex: PCRE2 (and its JIT's code), Go's regexp, RE2 (C++ or go-re2).
func isRegex(f string) bool {
	return strings.HasPrefix(f, "pcre2_") || strings.HasPrefix(f, "_pcre2_") ||
		strings.HasPrefix(f, "[libpcre2") || strings.HasPrefix(f, "regexp.") ||
		strings.HasPrefix(f, "regexp/") || strings.HasPrefix(f, "re2::") ||
		strings.HasPrefix(f, "[libre2") || strings.HasPrefix(f, "github.com/wasilibs/go-re2") ||
		strings.HasPrefix(f, "modsecurity::Utils::Regex::")
}

// isJIT: a frame in anonymous executable memory (perf names it after the
// perf-PID.map it looked for): PCRE2's JIT code, the only JIT these
// processes run (Envoy's LuaJIT is never used).
func isJIT(f string) bool { return strings.HasPrefix(f, "[perf-") && strings.HasSuffix(f, ".map]") }

// isAlloc: allocator entry points and internals — Envoy's exported
// malloc family (its tcmalloc), glibc malloc, libstdc++'s operator
// new/delete, a build's private mimalloc (mi_…, filters/builds.yaml
// allocator:), Go's mallocgc and garbage collector.
func isAlloc(f string) bool {
	if allocNames[f] || IsPrivateAlloc(f) {
		return true
	}
	for _, p := range allocPrefixes {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}

// IsPrivateAlloc: a build's private mimalloc (filters/builds.yaml
// allocator:), linked into the module: mi_malloc, _mi_page_malloc ….
func IsPrivateAlloc(f string) bool {
	return strings.HasPrefix(f, "mi_") || strings.HasPrefix(f, "_mi_")
}

var allocNames = map[string]bool{
	"malloc": true, "free": true, "calloc": true, "realloc": true, "cfree": true, "reallocarray": true,
	"posix_memalign": true, "memalign": true, "aligned_alloc": true, "valloc": true, "pvalloc": true,
	"malloc_usable_size": true, "__libc_malloc": true, "__libc_free": true, "__libc_calloc": true,
	"__libc_realloc": true, "__libc_memalign": true, "_int_malloc": true, "_int_free": true,
	"_int_realloc": true, "_int_memalign": true, "malloc_consolidate": true, "unlink_chunk.constprop.0": true,
	"tcache_init.part.0": true, "__GI___libc_malloc": true, "__GI___libc_free": true, "sysmalloc": true,
	"runtime.newobject": true, "runtime.makeslice": true, "runtime.growslice": true,
	"runtime.rawstring": true, "runtime.rawbyteslice": true, "runtime.rawstringtmp": true,
	"runtime.makemap_small": true, "runtime.makemap": true, "runtime.newarray": true,
	"runtime.greyobject": true, "runtime.findObject": true, "runtime.spanOf": true,
	"runtime.tryDeferToSpanScan": true, "runtime.heapSetType": true, "runtime.memclrNoHeapPointers": false,
}

var allocPrefixes = []string{
	"operator new", "operator delete", "tcmalloc::", "__gnu_cxx::new_allocator",
	"runtime.mallocgc", "runtime.gc", "runtime.(*gc", "runtime.scanobject", "runtime.scanblock",
	"runtime.scanstack", "runtime.scanframe", "runtime.markroot", "runtime.markBits",
	"runtime.(*mspan)", "runtime.(*mheap)", "runtime.(*mcache)", "runtime.(*mcentral)",
	"runtime.(*pageAlloc)", "runtime.(*sweepLocked)", "runtime.(*sweepLocker)", "runtime.sweepone",
	"runtime.bgsweep", "runtime.bgscavenge", "runtime.(*scavenger", "runtime.wbBuf",
	"runtime.gcWriteBarrier", "runtime.bulkBarrier", "runtime.heapBits", "runtime.(*heapBits",
	"runtime.nextFreeFast", "runtime.(*mSpanList)", "runtime.(*fixalloc)", "runtime.memclrNoHeapPointersChunked",
	"runtime.typePointers", "runtime.(*typePointers)", "runtime.deductAssistCredit",
}

// isCxxRuntime: libstdc++ and the C++ runtime (frames only WAF code runs in
// these processes).
func isCxxRuntime(f string) bool {
	return strings.HasPrefix(f, "std::") || strings.HasPrefix(f, "__gnu_cxx::") ||
		strings.HasPrefix(f, "[libstdc++") || strings.HasPrefix(f, "__cxa_") ||
		strings.HasPrefix(f, "__cxxabiv1::") || strings.HasPrefix(f, "[libgcc_s") ||
		strings.HasPrefix(f, "_Unwind_") || f == "__dynamic_cast" || strings.HasPrefix(f, "__cxxabi")
}

// isLibc: glibc frames named by their symbols (string functions and the
// like) and unsymbolised ones.
func isLibc(f string) bool {
	return strings.HasPrefix(f, "__mem") || strings.HasPrefix(f, "__str") || strings.HasPrefix(f, "mem") ||
		strings.HasPrefix(f, "str") || f == "tolower" || f == "toupper" || strings.HasPrefix(f, "[libc.so")
}

// isWAF: a frame only WAF code runs (see the package comment).
func isWAF(f string) bool {
	return isModule(f) || IsEngine(f) || isRegex(f) || isCxxRuntime(f) || isJIT(f) ||
		strings.HasPrefix(f, "operator new") || strings.HasPrefix(f, "operator delete") ||
		(strings.Contains(f, ".") && isGoFrame(f))
}

// isGoFrame: a Go function of the module (package-qualified name); Envoy's
// frames are all "[envoy]" and C symbols carry no package path.
func isGoFrame(f string) bool {
	for _, p := range []string{"runtime.", "strings.", "strconv.", "sync.", "internal/", "bytes.", "unicode",
		"github.com/", "golang.org/", "encoding/", "net/", "fmt.", "sort.", "slices.", "maps.",
		"reflect.", "errors.", "io.", "bufio.", "math/", "time.", "os.", "path", "mime", "hash/"} {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return strings.HasPrefix(f, "aeshash") || strings.HasPrefix(f, "memeqbody") ||
		strings.HasPrefix(f, "cmpbody") || strings.HasPrefix(f, "indexbytebody") || strings.HasPrefix(f, "gogo")
}

// isGoThreadRoot: the root frame of a thread of the Go runtime (its
// scheduler, GC workers) or of a goroutine switch off a hook.
func isGoThreadRoot(f string) bool {
	switch f {
	case "runtime.mstart.abi0", "runtime.mstart", "runtime.goexit.abi0", "runtime.goexit",
		"runtime.mcall", "runtime.morestack.abi0", "runtime.rt0_go.abi0", "runtime.systemstack.abi0",
		"runtime.sigtramp.abi0", "runtime.sigtramp":
		return true
	}
	return false
}

// threadRoots are the roots of a complete user stack of an Envoy thread.
var threadRoots = map[string]bool{
	"start_thread": true, "__clone3": true, "__clone": true, "clone3": true, "clone": true,
	"_start": true, "__libc_start_main": true, "__libc_start_call_main": true, "main": false,
}

// envoyIO are glibc's socket and event-loop calls whose frame-less wrappers
// cut Envoy's stacks (perf shows them as the root): only Envoy calls them
// on a worker (the modules do no socket I/O), so a stack of such a root and
// kernel frames is Envoy's.
var envoyIO = map[string]bool{
	"__send": true, "__libc_send": true, "__GI___readv": true, "__readv": true, "__writev": true,
	"__GI___writev": true, "__libc_recv": true, "__recv": true, "__libc_sendmsg": true,
	"__libc_recvmsg": true, "epoll_wait": true, "__GI_epoll_wait": true, "__libc_read": true,
	"__GI___libc_read": true, "__libc_write": true, "__GI___libc_write": true, "__GI___close": true,
	"__close": true, "__libc_accept4": true, "accept4": true, "__GI___ioctl": true,
}

// account is the split of one profile: the weight of its samples (ns of
// CPU with cpu-clock) by part, and by the rule that placed them.
type account struct {
	Parts [NParts]int64
	Rules map[string]int64
}

// Of classifies every stack of f.
func Of(f perf.Folded) account {
	a := account{Rules: map[string]int64{}}
	for s, n := range f {
		p, why := classify(s)
		a.Parts[p] += n
		a.Rules[why] += n
	}
	return a
}

// Alone classifies every stack of f, a profile of an engine alone (the
// in-process engine benchmark, tests/enginebench): no Envoy and no hooks,
// so a stack's user part is placed as a sample inside the hooks would be
// (engine, regex, allocator, module, helpers), kernel frames as Kernel, and
// the Go runtime's background work (GC workers, sweeper, scavenger,
// sysmon) as Runtime, where Envoy's profile finds it on the Go runtime's own
// threads. The parts line up with Of's inside the hooks, part by part.
// Samples of the benchmark's untimed work between requests (isUntimed) are
// left out of the parts, counted under ByUntimed.
func Alone(f perf.Folded) account {
	a := account{Rules: map[string]int64{}}
	for s, n := range f {
		frames := strings.Split(s, ";")
		if len(frames) > 0 {
			frames = frames[1:] // the thread's name
		}
		k := kernelStart(frames)
		user := frames[:k]
		if slices.ContainsFunc(user, isUntimed) {
			a.Rules[ByUntimed] += n
			continue
		}
		var p Part
		switch {
		case slices.ContainsFunc(user, isGoBackground):
			p = Runtime
		case k < len(frames):
			p = Kernel
		default:
			p = inside(user)
		}
		a.Parts[p] += n
		a.Rules[ByAlone] += n
	}
	return a
}

// isUntimed: a frame of the benchmark's work between timed requests (the
// cold-cache buffer's writes, the timer's stop and start, which read the
// memory statistics): in the profile, but not in the benchmark's ns/op.
func isUntimed(f string) bool {
	switch f {
	case "wafbench/tests/enginebench.Touch", "testing.(*B).StopTimer", "testing.(*B).StartTimer":
		return true
	}
	return false
}

// isGoBackground: a frame of the Go runtime's own background work.
func isGoBackground(f string) bool {
	switch f {
	case "runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge", "runtime.sysmon", "runtime.forcegchelper":
		return true
	}
	return false
}

// Total returns the weight of all samples.
func (a account) Total() int64 {
	var t int64
	for _, n := range a.Parts {
		t += n
	}
	return t
}

// hooks returns the weight of the samples inside the hooks.
func (a account) hooks() int64 {
	var t int64
	for p, n := range a.Parts {
		if Part(p).InHooks() {
			t += n
		}
	}
	return t
}

// Share returns part p's fraction of all samples (0 for an empty account).
func (a account) Share(p Part) float64 {
	t := a.Total()
	if t == 0 {
		return 0
	}
	return float64(a.Parts[p]) / float64(t)
}
