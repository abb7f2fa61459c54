package proxywasm

import (
	"bytes"
	"errors"
	"fmt"
)

// Import is one entry of a WebAssembly module's import section.
type Import struct {
	Module, Name string
	Kind         byte // 0 function, 1 table, 2 memory, 3 global, 4 tag
}

// export is one entry of a module's export section.
type export struct {
	Name string
	Kind byte
}

// wasmMagic is "\0asm" followed by binary format version 1.
var wasmMagic = []byte{0, 'a', 's', 'm', 1, 0, 0, 0}

// ReadModuleInterface reads the import and export sections of a
// WebAssembly binary module (the binary format of the WebAssembly core
// specification, section 5): enough to check what a plugin needs from its
// host and what it offers, without compiling it.
func ReadModuleInterface(b []byte) (imports []Import, exports []export, err error) {
	if !bytes.HasPrefix(b, wasmMagic) {
		return nil, nil, errors.New("wasm: not a WebAssembly version 1 binary (bad magic or version)")
	}
	r := &wasmReader{b: b[len(wasmMagic):]}
	for len(r.b) > 0 {
		id := r.byte()
		size := r.u32()
		if r.err != nil {
			break
		}
		if uint64(size) > uint64(len(r.b)) {
			return nil, nil, fmt.Errorf("wasm: section %d: size %d beyond the end of the file", id, size)
		}
		sec := &wasmReader{b: r.b[:size]}
		r.b = r.b[size:]
		switch id {
		case 2:
			imports, err = readImports(sec)
		case 7:
			exports, err = readExports(sec)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return imports, exports, r.err
}

func readImports(r *wasmReader) ([]Import, error) {
	n := r.u32()
	var out []Import
	for i := uint32(0); i < n && r.err == nil; i++ {
		im := Import{Module: r.name(), Name: r.name(), Kind: r.byte()}
		switch im.Kind {
		case 0: // function: type index
			r.u32()
		case 1: // table: reference type, limits
			r.byte()
			r.limits()
		case 2: // memory: limits
			r.limits()
		case 3: // global: value type, mutability
			r.byte()
			r.byte()
		case 4: // tag: attribute, type index
			r.byte()
			r.u32()
		default:
			return nil, fmt.Errorf("wasm: import %d (%s.%s): unknown kind %d", i, im.Module, im.Name, im.Kind)
		}
		out = append(out, im)
	}
	if r.err != nil {
		return nil, fmt.Errorf("wasm: import section: %w", r.err)
	}
	return out, nil
}

func readExports(r *wasmReader) ([]export, error) {
	n := r.u32()
	var out []export
	for i := uint32(0); i < n && r.err == nil; i++ {
		e := export{Name: r.name(), Kind: r.byte()}
		r.u32()
		out = append(out, e)
	}
	if r.err != nil {
		return nil, fmt.Errorf("wasm: export section: %w", r.err)
	}
	return out, nil
}

// wasmReader reads the binary format's primitives; the first error sticks.
type wasmReader struct {
	b   []byte
	err error
}

var errWasmShort = errors.New("unexpected end of data")

func (r *wasmReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail(errWasmShort)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// u32 reads an unsigned LEB128 number of at most 32 bits.
func (r *wasmReader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail(errors.New("LEB128 number longer than 5 bytes"))
	return 0
}

func (r *wasmReader) name() string {
	n := r.u32()
	if r.err != nil {
		return ""
	}
	if uint64(n) > uint64(len(r.b)) {
		r.fail(errWasmShort)
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *wasmReader) limits() {
	flags := r.byte()
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}

func (r *wasmReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}
