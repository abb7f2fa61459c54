package proxywasm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// encodeHeaderMap serializes pairs the way the ABI passes HTTP fields: the
// number of pairs as a little-endian uint32, then for each pair the key
// length and the value length (uint32 each), then each key and each value
// followed by a NUL byte. An empty map is encoded as no bytes.
func encodeHeaderMap(pairs [][2]string) []byte {
	if len(pairs) == 0 {
		return nil
	}
	n := 4 + 8*len(pairs)
	for _, p := range pairs {
		n += len(p[0]) + len(p[1]) + 2
	}
	b := make([]byte, 4, n)
	binary.LittleEndian.PutUint32(b, uint32(len(pairs)))
	for _, p := range pairs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p[0])))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p[1])))
	}
	for _, p := range pairs {
		b = append(b, p[0]...)
		b = append(b, 0)
		b = append(b, p[1]...)
		b = append(b, 0)
	}
	return b
}

// errShortMap reports a serialized map that ends before its declared
// contents.
var errShortMap = errors.New("serialized header map: truncated")

// decodeHeaderMap parses a serialized header map (see EncodeHeaderMap),
// appending the pairs to dst[:0]. An empty input and the single byte 0x00
// are the empty map. Lengths that run past the input, a missing NUL
// terminator or trailing bytes are errors.
func decodeHeaderMap(dst [][2]string, b []byte) ([][2]string, error) {
	out := dst[:0]
	if len(b) == 0 || (len(b) == 1 && b[0] == 0) {
		return out, nil
	}
	if len(b) < 4 {
		return out, errShortMap
	}
	n := binary.LittleEndian.Uint32(b)
	sizes := b[4:]
	if uint64(len(sizes)) < 8*uint64(n) {
		return out, fmt.Errorf("%w: %d pairs need %d bytes of lengths, have %d", errShortMap, n, 8*uint64(n), len(sizes))
	}
	data := sizes[8*n:]
	for i := range n {
		kl := uint64(binary.LittleEndian.Uint32(sizes[8*i:]))
		vl := uint64(binary.LittleEndian.Uint32(sizes[8*i+4:]))
		if uint64(len(data)) < kl+vl+2 {
			return out, fmt.Errorf("%w: pair %d needs %d bytes, have %d", errShortMap, i, kl+vl+2, len(data))
		}
		if data[kl] != 0 || data[kl+1+vl] != 0 {
			return out, fmt.Errorf("serialized header map: pair %d: missing NUL terminator", i)
		}
		out = append(out, [2]string{string(data[:kl]), string(data[kl+1 : kl+1+vl])})
		data = data[kl+vl+2:]
	}
	if len(data) != 0 {
		return out, fmt.Errorf("serialized header map: %d bytes after %d pairs", len(data), n)
	}
	return out, nil
}

// encodePropertyPath joins the segments of a property path (e.g. "source",
// "address") with NUL bytes, the form proxy_get_property takes.
func encodePropertyPath(segments ...string) []byte {
	return []byte(strings.Join(segments, "\x00"))
}
