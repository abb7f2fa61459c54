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

// Status is proxy_status_t, the result of every host call.
type Status uint32

// The proxy_status_t values of ABI v0.2.1.
const (
	StatusOK                   Status = 0
	StatusNotFound             Status = 1
	StatusBadArgument          Status = 2
	StatusSerializationFailure Status = 3
	StatusParseFailure         Status = 4
	StatusInvalidMemoryAccess  Status = 6
	StatusEmpty                Status = 7
	StatusCASMismatch          Status = 8
	StatusInternalFailure      Status = 10
	StatusUnimplemented        Status = 12
)

var statusNames = map[Status]string{
	StatusOK: "OK", StatusNotFound: "NOT_FOUND", StatusBadArgument: "BAD_ARGUMENT",
	StatusSerializationFailure: "SERIALIZATION_FAILURE", StatusParseFailure: "PARSE_FAILURE",
	StatusInvalidMemoryAccess: "INVALID_MEMORY_ACCESS", StatusEmpty: "EMPTY", StatusCASMismatch: "CAS_MISMATCH",
	StatusInternalFailure: "INTERNAL_FAILURE", StatusUnimplemented: "UNIMPLEMENTED",
}

func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status(%d)", uint32(s))
}

// Error is a host call that did not return StatusOK.
type Error struct {
	Call   string // the host function, e.g. "proxy_get_buffer_bytes"
	Status Status
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

// BufferType is proxy_buffer_type_t.
type BufferType uint32

// The proxy_buffer_type_t values this binding uses.
const (
	BufferHTTPRequestBody     BufferType = 0
	BufferHTTPResponseBody    BufferType = 1
	BufferVMConfiguration     BufferType = 6
	BufferPluginConfiguration BufferType = 7
)

// MapType is proxy_map_type_t.
type MapType uint32

// The proxy_map_type_t values of HTTP fields.
const (
	MapHTTPRequestHeaders   MapType = 0
	MapHTTPRequestTrailers  MapType = 1
	MapHTTPResponseHeaders  MapType = 2
	MapHTTPResponseTrailers MapType = 3
)

// LogLevel is proxy_log_level_t.
type LogLevel uint32

// The proxy_log_level_t values.
const (
	LogTrace    LogLevel = 0
	LogDebug    LogLevel = 1
	LogInfo     LogLevel = 2
	LogWarn     LogLevel = 3
	LogError    LogLevel = 4
	LogCritical LogLevel = 5
)

// MetricType is proxy_metric_type_t.
type MetricType uint32

// The proxy_metric_type_t values.
const (
	MetricCounter   MetricType = 0
	MetricGauge     MetricType = 1
	MetricHistogram MetricType = 2
)

// StreamType is proxy_stream_type_t.
type StreamType uint32

// The proxy_stream_type_t values of HTTP.
const (
	StreamHTTPRequest  StreamType = 0
	StreamHTTPResponse StreamType = 1
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

// NewPluginFunc creates the root context contextID.
type NewPluginFunc func(contextID uint32) Plugin

var newPlugin NewPluginFunc

// SetNewPlugin registers the plugin's constructor; call it from init.
func SetNewPlugin(f NewPluginFunc) { newPlugin = f }
