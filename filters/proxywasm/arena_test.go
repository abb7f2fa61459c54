package proxywasm

import (
	"strings"
	"testing"
	"unsafe"
)

// TestArena plays the host's side of a call that returns a buffer: it
// allocates through the arena, writes into the memory at the returned
// address, and the module takes the bytes back by address and size.
func TestArena(t *testing.T) {
	var a arena
	p := a.alloc(5)
	if p == 0 {
		t.Fatal("alloc returned address 0")
	}
	// The host writes through the address; the arena's slice is the same
	// memory.
	host := a.bufs[p]
	if uintptr(unsafe.Pointer(&host[0])) != p {
		t.Fatal("the buffer does not start at the returned address")
	}
	copy(host, "hello")
	got, err := a.take(p, 5)
	if err != nil || string(got) != "hello" {
		t.Fatalf("take: got %q, %v; want \"hello\"", got, err)
	}
	if _, err := a.take(p, 5); err == nil || !strings.Contains(err.Error(), "did not allocate") {
		t.Errorf("second take: got %v, want an error naming the unknown address", err)
	}

	for _, tc := range []struct {
		name    string
		size    uint32
		take    uint32
		want    int
		wantErr string
	}{
		{name: "zero-size allocation has an address", size: 0, take: 0, want: 0},
		{name: "shorter result", size: 8, take: 3, want: 3},
		{name: "size beyond buffer", size: 2, take: 3, wantErr: "3 bytes in a buffer of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := a.alloc(tc.size)
			if p == 0 {
				t.Fatal("alloc returned address 0")
			}
			got, err := a.take(p, tc.take)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != tc.want {
				t.Fatalf("got %d bytes, %v; want %d", len(got), err, tc.want)
			}
		})
	}
	if got, err := a.take(0, 0); got != nil || err != nil {
		t.Errorf("take(0, 0): got %q, %v; want the empty result", got, err)
	}
	a.alloc(4)
	a.reset()
	if len(a.bufs) != 0 {
		t.Errorf("reset left %d buffers", len(a.bufs))
	}
}
