// Package proxywasm is wafbench's own binding of the subset of the
// Proxy-Wasm ABI v0.2.1 that an HTTP filter needs, for standard Go compiled
// with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared (exports with
// //go:wasmexport, host calls with //go:wasmimport from module "env").
// It was written from the public specification
// (github.com/proxy-wasm/spec, abi-versions/v0.2.1).
//
// The types and the serialization of header maps and property paths
// (this file and encoding.go) build on every platform, so they are unit
// tested with plain `go test`; the host calls and the exported callbacks
// exist only in wasip1 builds.
//
// A plugin registers itself with SetNewPlugin from an init function. The
// host then creates one Plugin per plugin configuration (root context) and
// one Stream per HTTP request (stream context), calling their methods from
// the exported proxy_on_* callbacks. Host calls act on the context whose
// callback is running.
package proxywasm

import "fmt"

// status is proxy_status_t, the result of every host call.
type status uint32

// The proxy_status_t values of ABI v0.2.1.
const (
	statusOK                   status = 0
	StatusNotFound             status = 1
	statusBadArgument          status = 2
	statusSerializationFailure status = 3
	statusParseFailure         status = 4
	statusInvalidMemoryAccess  status = 6
	statusEmpty                status = 7
	statusCASMismatch          status = 8
	statusInternalFailure      status = 10
	statusUnimplemented        status = 12
)

var statusNames = map[status]string{
	statusOK: "OK", StatusNotFound: "NOT_FOUND", statusBadArgument: "BAD_ARGUMENT",
	statusSerializationFailure: "SERIALIZATION_FAILURE", statusParseFailure: "PARSE_FAILURE",
	statusInvalidMemoryAccess: "INVALID_MEMORY_ACCESS", statusEmpty: "EMPTY", statusCASMismatch: "CAS_MISMATCH",
	statusInternalFailure: "INTERNAL_FAILURE", statusUnimplemented: "UNIMPLEMENTED",
}

func (s status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status(%d)", uint32(s))
}

// Error is a host call that did not return StatusOK.
type Error struct {
	Call   string // the host function, e.g. "proxy_get_buffer_bytes"
	Status status
}

func (e *Error) Error() string { return e.Call + ": " + e.Status.String() }

// Action is proxy_action_t, what a stream callback asks the host to do.
type Action uint32

// The proxy_action_t values.
const (
	// Continue forwards what the callback was given.
	Continue Action = 0
	// Pause stops processing; from a body callback before the end of the
	// stream it makes the host buffer the body (Envoy:
	// StopIterationAndBuffer), so the next call sees all of it.
	Pause Action = 1
)

// bufferType is proxy_buffer_type_t.
type bufferType uint32

// The proxy_buffer_type_t values this binding uses.
const (
	BufferHTTPRequestBody     bufferType = 0
	BufferHTTPResponseBody    bufferType = 1
	bufferVMConfiguration     bufferType = 6
	bufferPluginConfiguration bufferType = 7
)

// mapType is proxy_map_type_t.
type mapType uint32

// The proxy_map_type_t values of HTTP fields.
const (
	MapHTTPRequestHeaders   mapType = 0
	mapHTTPRequestTrailers  mapType = 1
	MapHTTPResponseHeaders  mapType = 2
	mapHTTPResponseTrailers mapType = 3
)

// LogLevel is proxy_log_level_t.
type LogLevel uint32

// The proxy_log_level_t values.
const (
	logTrace    LogLevel = 0
	logDebug    LogLevel = 1
	LogInfo     LogLevel = 2
	logWarn     LogLevel = 3
	LogError    LogLevel = 4
	LogCritical LogLevel = 5
)

// metricType is proxy_metric_type_t.
type metricType uint32

// The proxy_metric_type_t values.
const (
	MetricCounter   metricType = 0
	metricGauge     metricType = 1
	metricHistogram metricType = 2
)

// streamType is proxy_stream_type_t.
type streamType uint32

// The proxy_stream_type_t values of HTTP.
const (
	streamHTTPRequest  streamType = 0
	streamHTTPResponse streamType = 1
)

// Plugin is one plugin configuration (a root context).
type Plugin interface {
	// OnConfigure is given the size of the plugin configuration, which
	// PluginConfiguration reads; false fails the configuration.
	OnConfigure(configSize int) bool
	// NewStream returns the context of one HTTP stream.
	NewStream(contextID uint32) Stream
}

// Stream is one HTTP request/response pair (a stream context). Each method
// is called from the callback of the same name.
type Stream interface {
	OnRequestHeaders(numHeaders int, endOfStream bool) Action
	// OnRequestBody is given the size of the body available to
	// GetBufferBytes(BufferHTTPRequestBody, ...): everything buffered so
	// far when earlier calls returned Pause.
	OnRequestBody(bodySize int, endOfStream bool) Action
	OnRequestTrailers(numTrailers int) Action
	OnResponseHeaders(numHeaders int, endOfStream bool) Action
	OnResponseBody(bodySize int, endOfStream bool) Action
	OnResponseTrailers(numTrailers int) Action
	// OnLog runs once the stream is done, before it is deleted.
	OnLog()
	// OnDelete releases the stream's state.
	OnDelete()
}

// newPluginFunc creates the root context contextID.
type newPluginFunc func(contextID uint32) Plugin

var newPlugin newPluginFunc

// SetNewPlugin registers the plugin's constructor; call it from init.
func SetNewPlugin(f newPluginFunc) { newPlugin = f }
