package proxywasm

import (
	"fmt"
	"unsafe"
)

// arena holds the buffers the host allocated in the module's memory
// (proxy_on_memory_allocate) to return data from a host call. Go's garbage
// collector does not move objects, so a buffer stays where the host wrote
// it as long as the arena references it; take hands it to Go code and
// drops the reference, reset drops the buffers of a failed call.
type arena struct {
	bufs map[uintptr][]byte
}

// alloc returns a new zeroed buffer of size bytes (at least one, so that
// the address is never 0, which the host reads as failure) and its address.
func (a *arena) alloc(size uint32) uintptr {
	if a.bufs == nil {
		a.bufs = map[uintptr][]byte{}
	}
	b := make([]byte, max(size, 1))
	p := uintptr(unsafe.Pointer(&b[0]))
	a.bufs[p] = b[:size]
	return p
}

// take returns the first size bytes of the buffer at address addr and
// forgets it. Address 0 with size 0 is an empty result; an address the
// arena did not hand out, or a size beyond the buffer, is an error.
func (a *arena) take(addr uintptr, size uint32) ([]byte, error) {
	if addr == 0 && size == 0 {
		return nil, nil
	}
	b, ok := a.bufs[addr]
	if !ok {
		return nil, fmt.Errorf("host returned address %#x, which proxy_on_memory_allocate did not allocate", addr)
	}
	delete(a.bufs, addr)
	if uint64(size) > uint64(len(b)) {
		return nil, fmt.Errorf("host returned %d bytes in a buffer of %d", size, len(b))
	}
	return b[:size], nil
}

// reset forgets every buffer not taken (a host call failed after
// allocating).
func (a *arena) reset() { clear(a.bufs) }
