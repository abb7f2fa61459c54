package adversarial

import (
	"bytes"
	"testing"
)

// TestBounds generates every family and shape at N = 1 and at its maximum:
// the same bytes twice, and within the stated bounds.
func TestBounds(t *testing.T) {
	if got := len(Families()); got < 8 {
		t.Fatalf("%d families, want at least 8", got)
	}
	for _, name := range Families() {
		f := lookup(name)
		method := "GET"
		if f.Body {
			method = "POST"
		}
		for _, s := range f.Shapes {
			for _, n := range []int{1, f.Max} {
				if name == "long_header" && s.Name == "many" && n > maxHeaders {
					n = maxHeaders
				}
				if err := Check(name, s.Name, n, method); err != nil {
					t.Fatalf("%s/%s n=%d: %v", name, s.Name, n, err)
				}
				a, b := Generate(name, s.Name, n), Generate(name, s.Name, n)
				if !bytes.Equal(a.Body, b.Body) || a.Query != b.Query || len(a.Headers) != len(b.Headers) {
					t.Errorf("%s/%s n=%d: not deterministic", name, s.Name, n)
				}
				// A value is N bytes before percent-encoding, at most 3N after.
				if len(a.Body) > 3*maxBodyBytes+1024 || len(a.Query) > 3*maxHeadBytes+1024 {
					t.Errorf("%s/%s n=%d: body %d, query %d bytes: over the bounds", name, s.Name, n, len(a.Body), len(a.Query))
				}
				if f.Body != (a.ContentType != "") {
					t.Errorf("%s/%s: body %v but content type %q", name, s.Name, f.Body, a.ContentType)
				}
			}
		}
	}
}

func TestCheckRejects(t *testing.T) {
	for _, c := range []struct {
		family, shape string
		n             int
		method        string
	}{
		{"nope", "x", 1, "GET"},
		{"rx_args", "nope", 1, "GET"},
		{"rx_args", "sqli_select", 0, "GET"},
		{"rx_args", "sqli_select", maxHeadBytes + 1, "GET"},
		{"json_deep", "array", 10, "GET"},
		{"long_header", "many", maxHeaders + 1, "GET"},
		{"encoding_chain", "url", maxLayers + 1, "POST"},
	} {
		if err := Check(c.family, c.shape, c.n, c.method); err == nil {
			t.Errorf("Check(%q, %q, %d, %s): no error", c.family, c.shape, c.n, c.method)
		}
	}
}

func TestShapes(t *testing.T) {
	if got := string(Generate("json_deep", "array", 3).Body); got != `[[["x"]]]` {
		t.Errorf("json_deep array 3 = %s", got)
	}
	if got := Generate("many_args", "query", 3).Query; got != "a1=v1&a2=v2&a3=v3" {
		t.Errorf("many_args query 3 = %s", got)
	}
	if got := encodeChain("url", 2); got[:9] != "%25%33%43" {
		t.Errorf("encoding_chain url 2 starts %q", got[:9])
	}
}
