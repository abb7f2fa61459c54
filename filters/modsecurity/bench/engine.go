//go:build modsecurity_engine

package bench

/*
#cgo CPPFLAGS: -I${SRCDIR}/..
#cgo LDFLAGS: -L${SRCDIR}/../../../build/filters -lwafbench_modsecurity_engine -lstdc++
#cgo pkg-config: modsecurity
#include <stdlib.h>
#include "engine_c.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Engine is one libmodsecurity rule set loaded through engine_c.h.
type Engine struct {
	p *C.wafbench_msc_engine
}

// NewEngine loads the ModSecurity rules file at path.
func NewEngine(path string) (*Engine, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var errbuf [1024]C.char
	p := C.wafbench_msc_engine_new(cpath, &errbuf[0], C.size_t(len(errbuf)))
	if p == nil {
		return nil, fmt.Errorf("modsecurity rules %s: %s", path, C.GoString(&errbuf[0]))
	}
	return &Engine{p: p}, nil
}

// Evaluate runs one request through phases 1, 2 and logging and returns the
// status: 200 allowed, the intervention status when blocked, 500 on an engine
// error. headers holds "Name: value" lines separated by "\n". None of the
// slices is retained.
func (e *Engine) Evaluate(method, uri, headers, body []byte) (int, error) {
	if e.p == nil {
		return 0, errors.New("modsecurity engine: closed")
	}
	st := C.wafbench_msc_engine_evaluate(e.p,
		ptr(method), C.size_t(len(method)),
		ptr(uri), C.size_t(len(uri)),
		ptr(headers), C.size_t(len(headers)),
		ptr(body), C.size_t(len(body)))
	if st < 0 {
		return 0, errors.New("modsecurity engine: invalid arguments")
	}
	return int(st), nil
}

// Close releases the engine. It is safe to call more than once.
func (e *Engine) Close() {
	C.wafbench_msc_engine_free(e.p)
	e.p = nil
}

// ptr returns a C view of b without copying; b holds no Go pointers, so
// passing it to C follows the cgo pointer rules.
func ptr(b []byte) *C.char {
	if len(b) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}
