package replay

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestVegetaHTTP(t *testing.T) {
	got, err := ReadFile(filepath.Join("testdata", "targets.txt"), Vegeta)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Method: "GET", Target: "/api/v2/orders?status=shipped&limit=25", Host: "shop.example.com",
			Headers: [][2]string{{"Accept", "application/json"}, {"X-Request-Id", "1f0c"}}},
		{Method: "POST", Target: "/api/v2/orders", Host: "api.example.com:8443",
			Headers: [][2]string{{"Content-Type", "application/json"}, {"Authorization", "Bearer abc.def.ghi"}},
			Body:    []byte(`{"items":[{"sku":"RUN-42","qty":1}],"currency":"EUR"}`)},
		{Method: "HEAD", Target: "/healthz", Host: "internal.example.com"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestVegetaJSON(t *testing.T) {
	got, err := ReadFile(filepath.Join("testdata", "targets.jsonl"), Vegeta)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Method: "GET", Target: "/a?b=c", Host: "shop.example.com", Headers: [][2]string{{"Accept", "application/json"}, {"X-Two", "1"}, {"X-Two", "2"}}},
		{Method: "POST", Target: "/form", Host: "shop.example.com", Headers: [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}, Body: []byte("q=shoes")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestHAR reads a devtools-style archive: HTTP/2 pseudo-headers, Host and
// Content-Length dropped, the Host taken from the URL or the Host header,
// the body from postData with its mimeType as Content-Type when the
// headers have none.
func TestHAR(t *testing.T) {
	got, err := ReadFile(filepath.Join("testdata", "shop.har"), HAR)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Method: "GET", Target: "/products/running-shoes?color=blue&size=42", Host: "shop.example.com",
			Headers: [][2]string{{"accept", "text/html"}, {"user-agent", "Mozilla/5.0 (X11; Linux x86_64)"}, {"cookie", "sid=8f14"}}},
		{Method: "POST", Target: "/api/cart", Host: "shop.example.com",
			Headers: [][2]string{{"Accept", "application/json"}, {"Content-Type", "application/json"}},
			Body:    []byte(`{"sku":"RUN-42","qty":1}`)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestBadFiles checks that each kind of bad file is one line naming the
// file, the entry and the field.
func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, format, data, want string
	}{
		{"t1.txt", Vegeta, "GET /relative\n", `t1.txt:1: target 1: url: want an absolute http(s) URL, got "/relative"`},
		{"t2.txt", Vegeta, "GET http://a/x\nBad header\n", `t2.txt:2: target 1: header: want "Name: value", got "Bad header"`},
		{"t3.txt", Vegeta, "GET http://a/x\n\nget http://a/y\n", `t3.txt:3: target 2: method: want an upper-case HTTP method, got "get"`},
		{"t4.txt", Vegeta, "POST http://a/x\n@missing.json\n", `t4.txt:2: target 1: body: open`},
		{"t5.txt", Vegeta, "GETONLY\n", `t5.txt:1: target 1: want "METHOD URL", got "GETONLY"`},
		{"t6.txt", Vegeta, "# nothing\n", `t6.txt: no requests`},
		{"t7.jsonl", Vegeta, `{"method":"GET","url":"http://a/","bogus":1}`, `t7.jsonl:1: target 1: json: unknown field "bogus"`},
		{"t8.jsonl", Vegeta, `{"method":"GET","url":"http://a/","body":"%%%"}`, `t8.jsonl:1: target 1: body: want base64`},
		{"h1.har", HAR, `{"log":{"entries":[{"request":{"method":"GET","url":"http://a/"}},{"request":{"method":"GET","url":"ftp://a/"}}]}}`, `h1.har: entry 2: request.url: want an absolute http(s) URL, got "ftp://a/"`},
		{"h2.har", HAR, `{"log":{"entries":[{"request":{"method":"GET","url":"http://a/","headers":[{"name":"X Y","value":"1"}]}}]}}`, `h2.har: entry 1: request.headers[0]: want a header name, got "X Y"`},
		{"h3.har", HAR, `{"log":{"entries":[{}]}}`, `h3.har: entry 1: request: missing`},
		{"h4.har", HAR, `not json`, `h4.har: not a HAR file`},
		{"h5.har", HAR, `{"log":{"entries":[{"request":{"method":"POST","url":"http://a/","postData":{"text":"x","encoding":"gzip"}}}]}}`, `h5.har: entry 1: request.postData.encoding: want base64 or none, got "gzip"`},
		{"x.txt", "curl", "", `x.txt: format: want vegeta or har, got "curl"`},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(p, tc.format)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line starting %q", tc.name, err, tc.want)
		}
	}
}
