//go:build wasip1

package proxywasm

// The callbacks the host calls (ABI v0.2.1). Booleans are i32 0/1.

var (
	plugins = map[uint32]Plugin{}
	streams = map[uint32]Stream{}
)

//go:wasmexport proxy_abi_version_0_2_1
func proxyABIVersion021() {}

//go:wasmexport proxy_on_memory_allocate
func proxyOnMemoryAllocate(size uint32) uint32 {
	return uint32(mem.alloc(size))
}

//go:wasmexport proxy_on_context_create
func proxyOnContextCreate(contextID, parentID uint32) {
	if parentID == 0 {
		if newPlugin == nil {
			panic("proxywasm: no plugin registered (SetNewPlugin)")
		}
		plugins[contextID] = newPlugin(contextID)
		return
	}
	p, ok := plugins[parentID]
	if !ok {
		panic("proxywasm: stream context created for unknown plugin context")
	}
	streams[contextID] = p.NewStream(contextID)
}

//go:wasmexport proxy_on_vm_start
func proxyOnVMStart(contextID, vmConfigSize uint32) uint32 { return 1 }

//go:wasmexport proxy_on_configure
func proxyOnConfigure(contextID, configSize uint32) uint32 {
	p, ok := plugins[contextID]
	if !ok {
		return 0
	}
	return boolWord(p.OnConfigure(int(configSize)))
}

//go:wasmexport proxy_on_request_headers
func proxyOnRequestHeaders(contextID, numHeaders, endOfStream uint32) uint32 {
	if s, ok := streams[contextID]; ok {
		return uint32(s.OnRequestHeaders(int(numHeaders), endOfStream != 0))
	}
	return uint32(Continue)
}

//go:wasmexport proxy_on_request_body
func proxyOnRequestBody(contextID, bodySize, endOfStream uint32) uint32 {
	if s, ok := streams[contextID]; ok {
		return uint32(s.OnRequestBody(int(bodySize), endOfStream != 0))
	}
	return uint32(Continue)
}

//go:wasmexport proxy_on_request_trailers
func proxyOnRequestTrailers(contextID, numTrailers uint32) uint32 {
	if s, ok := streams[contextID]; ok {
		return uint32(s.OnRequestTrailers(int(numTrailers)))
	}
	return uint32(Continue)
}

//go:wasmexport proxy_on_response_headers
func proxyOnResponseHeaders(contextID, numHeaders, endOfStream uint32) uint32 {
	if s, ok := streams[contextID]; ok {
		return uint32(s.OnResponseHeaders(int(numHeaders), endOfStream != 0))
	}
	return uint32(Continue)
}

//go:wasmexport proxy_on_response_body
func proxyOnResponseBody(contextID, bodySize, endOfStream uint32) uint32 {
	if s, ok := streams[contextID]; ok {
		return uint32(s.OnResponseBody(int(bodySize), endOfStream != 0))
	}
	return uint32(Continue)
}

//go:wasmexport proxy_on_response_trailers
func proxyOnResponseTrailers(contextID, numTrailers uint32) uint32 {
	if s, ok := streams[contextID]; ok {
		return uint32(s.OnResponseTrailers(int(numTrailers)))
	}
	return uint32(Continue)
}

//go:wasmexport proxy_on_done
func proxyOnDone(contextID uint32) uint32 { return 1 }

//go:wasmexport proxy_on_log
func proxyOnLog(contextID uint32) {
	if s, ok := streams[contextID]; ok {
		s.OnLog()
	}
}

//go:wasmexport proxy_on_delete
func proxyOnDelete(contextID uint32) {
	if s, ok := streams[contextID]; ok {
		delete(streams, contextID)
		s.OnDelete()
		return
	}
	delete(plugins, contextID)
}

func boolWord(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
