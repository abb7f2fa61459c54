//go:build wasip1

package proxywasm

import (
	"unsafe"
)

// Host functions of ABI v0.2.1 (module "env"). Pointers are i32 addresses
// in the module's linear memory; sizes are i32.

//go:wasmimport env proxy_log
func proxyLog(level uint32, msg unsafe.Pointer, size uint32) uint32

//go:wasmimport env proxy_get_log_level
func proxyGetLogLevel(ret *uint32) uint32

//go:wasmimport env proxy_get_buffer_bytes
func proxyGetBufferBytes(bt uint32, start, maxSize uint32, retPtr, retSize *uint32) uint32

//go:wasmimport env proxy_get_header_map_pairs
func proxyGetHeaderMapPairs(mt uint32, retPtr, retSize *uint32) uint32

//go:wasmimport env proxy_get_property
func proxyGetProperty(path unsafe.Pointer, pathSize uint32, retPtr, retSize *uint32) uint32

//go:wasmimport env proxy_send_local_response
func proxySendLocalResponse(status uint32, details unsafe.Pointer, detailsSize uint32, body unsafe.Pointer, bodySize uint32,
	headers unsafe.Pointer, headersSize uint32, grpcStatus int32) uint32

//go:wasmimport env proxy_define_metric
func proxyDefineMetric(mt uint32, name unsafe.Pointer, nameSize uint32, retID *uint32) uint32

//go:wasmimport env proxy_increment_metric
func proxyIncrementMetric(id uint32, delta int64) uint32

// mem is the arena of the buffers the host allocates for results.
var mem arena

func check(call string, st uint32) error {
	if status(st) == statusOK {
		return nil
	}
	return &Error{Call: call, Status: status(st)}
}

func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func stringPtr(s string) unsafe.Pointer { return unsafe.Pointer(unsafe.StringData(s)) }

// result collects a buffer the host allocated and filled.
func result(call string, st, ptr, size uint32) ([]byte, error) {
	if err := check(call, st); err != nil {
		mem.reset()
		return nil, err
	}
	b, err := mem.take(uintptr(ptr), size)
	mem.reset()
	if err != nil {
		return nil, &callError{call: call, err: err}
	}
	return b, nil
}

type callError struct {
	call string
	err  error
}

func (e *callError) Error() string { return e.call + ": " + e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// Log writes msg to the host's log at level.
func Log(level LogLevel, msg string) {
	proxyLog(uint32(level), stringPtr(msg), uint32(len(msg)))
}

// logLevelEnabled reports whether the host logs messages at level.
func logLevelEnabled(level LogLevel) bool {
	var l uint32
	if proxyGetLogLevel(&l) != uint32(statusOK) {
		return true
	}
	return LogLevel(l) <= level
}

// GetBufferBytes returns up to maxSize bytes of buffer bt from start.
func GetBufferBytes(bt bufferType, start, maxSize int) ([]byte, error) {
	var ptr, size uint32
	st := proxyGetBufferBytes(uint32(bt), uint32(start), uint32(maxSize), &ptr, &size)
	return result("proxy_get_buffer_bytes", st, ptr, size)
}

// PluginConfiguration returns the plugin configuration (call it from
// Plugin.OnConfigure with the size it was given).
func PluginConfiguration(size int) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	return GetBufferBytes(bufferPluginConfiguration, 0, size)
}

// GetHeaderMapPairs returns every field of map mt, appended to dst[:0].
func GetHeaderMapPairs(dst [][2]string, mt mapType) ([][2]string, error) {
	var ptr, size uint32
	b, err := result("proxy_get_header_map_pairs", proxyGetHeaderMapPairs(uint32(mt), &ptr, &size), ptr, size)
	if err != nil {
		return dst[:0], err
	}
	return decodeHeaderMap(dst, b)
}

// GetProperty returns the value of the property at path (e.g. "source",
// "address").
func GetProperty(path ...string) ([]byte, error) {
	p := encodePropertyPath(path...)
	var ptr, size uint32
	return result("proxy_get_property", proxyGetProperty(bytesPtr(p), uint32(len(p)), &ptr, &size), ptr, size)
}

// SendLocalResponse answers the stream with status, headers and body
// instead of forwarding it; details becomes the response code details in
// Envoy's access log. grpcStatus -1 means none.
func SendLocalResponse(status int, details string, body []byte, headers [][2]string, grpcStatus int32) error {
	h := encodeHeaderMap(headers)
	return check("proxy_send_local_response", proxySendLocalResponse(uint32(status), stringPtr(details), uint32(len(details)),
		bytesPtr(body), uint32(len(body)), bytesPtr(h), uint32(len(h)), grpcStatus))
}

// DefineMetric defines a metric and returns its id.
func DefineMetric(mt metricType, name string) (uint32, error) {
	var id uint32
	err := check("proxy_define_metric", proxyDefineMetric(uint32(mt), stringPtr(name), uint32(len(name)), &id))
	return id, err
}

// IncrementMetric adds delta to metric id.
func IncrementMetric(id uint32, delta int64) error {
	return check("proxy_increment_metric", proxyIncrementMetric(id, delta))
}
