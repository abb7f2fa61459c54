package proxywasm

import (
	"bytes"
	"strings"
	"testing"
)

// le32 is a little-endian uint32, spelled out so the expected layouts below
// read as the specification describes them.
func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestEncodeHeaderMap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pairs [][2]string
		want  []byte
	}{
		{name: "empty", pairs: nil, want: nil},
		// The specification's example: {"a": "1"}, {"b": "22"}.
		{name: "spec example", pairs: [][2]string{{"a", "1"}, {"b", "22"}}, want: cat(
			le32(2), le32(1), le32(1), le32(1), le32(2),
			[]byte("a\x001\x00b\x0022\x00"))},
		{name: "pseudo-header and empty value", pairs: [][2]string{{":path", "/x?y=1"}, {"x-empty", ""}}, want: cat(
			le32(2), le32(5), le32(6), le32(7), le32(0),
			[]byte(":path\x00/x?y=1\x00x-empty\x00\x00"))},
		{name: "value of 300 bytes", pairs: [][2]string{{"k", strings.Repeat("v", 300)}}, want: cat(
			le32(1), le32(1), []byte{0x2c, 0x01, 0, 0},
			[]byte("k\x00"), []byte(strings.Repeat("v", 300)), []byte{0})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := encodeHeaderMap(tc.pairs)
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("got % x\nwant % x", got, tc.want)
			}
			back, err := decodeHeaderMap(nil, got)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if len(back) != len(tc.pairs) {
				t.Fatalf("round trip: got %d pairs, want %d", len(back), len(tc.pairs))
			}
			for i := range back {
				if back[i] != tc.pairs[i] {
					t.Errorf("round trip pair %d: got %q, want %q", i, back[i], tc.pairs[i])
				}
			}
		})
	}
}

func TestDecodeHeaderMap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []byte
		want    [][2]string
		wantErr string
	}{
		{name: "no bytes is empty", in: nil, want: nil},
		{name: "single NUL is empty", in: []byte{0}, want: nil},
		{name: "zero pairs", in: le32(0), want: nil},
		{name: "host layout", in: cat(le32(3), le32(7), le32(3), le32(5), le32(1), le32(4), le32(9),
			[]byte(":method\x00GET\x00:path\x00/\x00host\x00localhost\x00")),
			want: [][2]string{{":method", "GET"}, {":path", "/"}, {"host", "localhost"}}},
		{name: "binary value", in: cat(le32(1), le32(1), le32(3), []byte("k\x00\xff\x01\x02\x00")),
			want: [][2]string{{"k", "\xff\x01\x02"}}},
		{name: "short count", in: []byte{1, 0}, wantErr: "truncated"},
		{name: "lengths missing", in: cat(le32(2), le32(1), le32(1)), wantErr: "truncated"},
		{name: "data shorter than lengths", in: cat(le32(1), le32(4), le32(4), []byte("abc\x00")), wantErr: "truncated"},
		{name: "huge count", in: cat(le32(0xffffffff), le32(1)), wantErr: "truncated"},
		{name: "missing NUL", in: cat(le32(1), le32(1), le32(1), []byte("abcd")), wantErr: "NUL"},
		{name: "trailing bytes", in: cat(le32(1), le32(1), le32(1), []byte("a\x00b\x00junk")), wantErr: "after 1 pairs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeHeaderMap(nil, tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("pair %d: got %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestDecodeHeaderMapReusesDst checks that decoding appends to dst[:0], so
// a stream can reuse one slice for every request.
func TestDecodeHeaderMapReusesDst(t *testing.T) {
	dst := make([][2]string, 1, 8)
	dst[0] = [2]string{"stale", "x"}
	got, err := decodeHeaderMap(dst, encodeHeaderMap([][2]string{{"a", "1"}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != [2]string{"a", "1"} || &got[0] != &dst[0] {
		t.Fatalf("got %q (reused=%v), want [[a 1]] in dst's array", got, len(got) > 0 && &got[0] == &dst[0])
	}
}

func TestEncodePropertyPath(t *testing.T) {
	for _, tc := range []struct {
		segs []string
		want string
	}{
		{[]string{"source", "address"}, "source\x00address"},
		{[]string{"request", "protocol"}, "request\x00protocol"},
		{[]string{"plugin_name"}, "plugin_name"},
	} {
		if got := string(encodePropertyPath(tc.segs...)); got != tc.want {
			t.Errorf("EncodePropertyPath(%q): got %q, want %q", tc.segs, got, tc.want)
		}
	}
}

func TestStatusString(t *testing.T) {
	for _, tc := range []struct {
		s    status
		want string
	}{{statusOK, "OK"}, {StatusNotFound, "NOT_FOUND"}, {statusUnimplemented, "UNIMPLEMENTED"}, {status(99), "status(99)"}} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("Status(%d): got %q, want %q", uint32(tc.s), got, tc.want)
		}
	}
	err := &Error{Call: "proxy_get_buffer_bytes", Status: StatusNotFound}
	if got, want := err.Error(), "proxy_get_buffer_bytes: NOT_FOUND"; got != want {
		t.Errorf("Error: got %q, want %q", got, want)
	}
}
