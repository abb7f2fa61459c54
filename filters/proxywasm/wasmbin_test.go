package proxywasm

import (
	"strings"
	"testing"
)

// uleb encodes v as unsigned LEB128.
func uleb(v uint32) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, c|0x80)
			continue
		}
		return append(out, c)
	}
}

func vecName(s string) []byte { return append(uleb(uint32(len(s))), s...) }

func section(id byte, body []byte) []byte {
	return append(append([]byte{id}, uleb(uint32(len(body)))...), body...)
}

// testModule is a module with a type section (skipped by the reader), two
// function imports, a memory import with a maximum and two exports.
func testModule() []byte {
	types := section(1, []byte{1, 0x60, 0, 0}) // one type: [] -> []
	imports := cat(uleb(3),
		vecName("env"), vecName("proxy_log"), []byte{0}, uleb(0),
		vecName("wasi_snapshot_preview1"), vecName("fd_write"), []byte{0}, uleb(200), // index > 127: two-byte LEB128
		vecName("env"), vecName("memory"), []byte{2, 1}, uleb(1), uleb(65536))
	exports := cat(uleb(2),
		vecName("proxy_on_memory_allocate"), []byte{0}, uleb(3),
		vecName("memory"), []byte{2}, uleb(0))
	return cat(wasmMagic, types, section(2, imports), section(7, exports))
}

func TestReadModuleInterface(t *testing.T) {
	ims, exs, err := ReadModuleInterface(testModule())
	if err != nil {
		t.Fatal(err)
	}
	wantIm := []Import{{"env", "proxy_log", 0}, {"wasi_snapshot_preview1", "fd_write", 0}, {"env", "memory", 2}}
	if len(ims) != len(wantIm) {
		t.Fatalf("imports: got %+v, want %+v", ims, wantIm)
	}
	for i := range ims {
		if ims[i] != wantIm[i] {
			t.Errorf("import %d: got %+v, want %+v", i, ims[i], wantIm[i])
		}
	}
	wantEx := []export{{"proxy_on_memory_allocate", 0}, {"memory", 2}}
	if len(exs) != len(wantEx) || exs[0] != wantEx[0] || exs[1] != wantEx[1] {
		t.Errorf("exports: got %+v, want %+v", exs, wantEx)
	}
}

func TestReadModuleInterfaceErrors(t *testing.T) {
	good := testModule()
	for _, tc := range []struct {
		name    string
		in      []byte
		wantErr string
	}{
		{name: "not wasm", in: []byte("\x7fELF\x02\x01\x01\x00"), wantErr: "bad magic"},
		{name: "version 2", in: []byte{0, 'a', 's', 'm', 2, 0, 0, 0}, wantErr: "bad magic"},
		{name: "section beyond end", in: cat(wasmMagic, []byte{2, 0x7f}), wantErr: "beyond the end"},
		{name: "truncated import", in: cat(wasmMagic, section(2, cat(uleb(1), vecName("env")))), wantErr: "import section"},
		{name: "unknown import kind", in: cat(wasmMagic, section(2, cat(uleb(1), vecName("env"), vecName("x"), []byte{9}))), wantErr: "unknown kind 9"},
		{name: "cut in the middle", in: good[:len(good)-3], wantErr: "beyond the end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadModuleInterface(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
