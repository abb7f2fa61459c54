package http1

import "testing"

func TestAppendRequest(t *testing.T) {
	tests := []struct {
		name           string
		method, target string
		headers        [][2]string
		body           []byte
		want           string
	}{
		{"no body", "GET", "/a?b=1", [][2]string{{"Host", "h"}, {"Accept", "*/*"}}, nil,
			"GET /a?b=1 HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n"},
		{"no host added", "GET", "/", nil, nil, "GET / HTTP/1.1\r\n\r\n"},
		{"empty body framed", "POST", "/", nil, []byte{}, "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n"},
		{"body", "POST", "/f", [][2]string{{"Content-Type", "text/plain"}}, []byte("abc"),
			"POST /f HTTP/1.1\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc"},
		{"own content-length kept", "POST", "/", [][2]string{{"content-LENGTH", "9"}}, []byte("abc"),
			"POST / HTTP/1.1\r\ncontent-LENGTH: 9\r\n\r\nabc"},
		{"chunked kept", "POST", "/", [][2]string{{"Transfer-Encoding", "chunked"}}, []byte("0\r\n\r\n"),
			"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AppendRequest(nil, tt.method, tt.target, tt.headers, tt.body)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAppendExact(t *testing.T) {
	tests := []struct {
		name, method, target, version string
		headers                       [][2]string
		body                          []byte
		want                          string
	}{
		{"empty version written empty, as go-ftw does", "GET", "/", "", nil, nil, "GET / \r\n\r\n"},
		{"odd version, duplicate headers, no length added", "POST", "/a?b", "HTTP/1.0",
			[][2]string{{"Host", "x"}, {"host", "y"}, {"X-Empty", ""}}, []byte("body"),
			"POST /a?b HTTP/1.0\r\nHost: x\r\nhost: y\r\nX-Empty: \r\n\r\nbody"},
		{"malformed method and target kept", "G ET", "/%%", "HTTP/1.1", [][2]string{{"Content-Length", "9"}}, []byte("a"),
			"G ET /%% HTTP/1.1\r\nContent-Length: 9\r\n\r\na"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AppendExact(nil, tt.method, tt.target, tt.version, tt.headers, tt.body)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
