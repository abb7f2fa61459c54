package load

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadResponse(t *testing.T) {
	type want struct {
		status int
		close  bool
		kind   kind
	}
	tests := []struct {
		name string
		head bool // response to a HEAD request
		raw  string
		want []want // one per read; the stream must be consumed exactly
	}{
		{"content-length", false,
			"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok",
			[]want{{200, false, kindOK}}},
		{"envoy style", false,
			"HTTP/1.1 403 Forbidden\r\ncontent-length: 9\r\ncontent-type: text/plain\r\ndate: Thu, 01 Jan 2026 00:00:00 GMT\r\nserver: envoy\r\n\r\nforbidden",
			[]want{{403, false, kindOK}}},
		{"header case", false,
			"HTTP/1.1 200 OK\r\nCONTENT-LENGTH:  3 \r\nCoNnEcTiOn: Close\r\n\r\nabc",
			[]want{{200, true, kindOK}}},
		{"chunked", false,
			"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n",
			[]want{{200, false, kindOK}}},
		{"transfer-encoding case", false,
			"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, Chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
			[]want{{200, false, kindOK}}},
		{"204 no body", false,
			"HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n",
			[]want{{204, false, kindOK}}},
		{"304 no body", false,
			"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n",
			[]want{{304, false, kindOK}}},
		{"HEAD no body", true,
			"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
			[]want{{200, false, kindOK}}},
		{"no reason phrase", false,
			"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
			[]want{{200, false, kindOK}}},
		{"100 continue skipped", false,
			"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
			[]want{{201, false, kindOK}}},
		{"pipelined", false,
			"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" +
				"HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nno\r\n0\r\n\r\n" +
				"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
			[]want{{200, false, kindOK}, {500, false, kindOK}, {200, false, kindOK}, {0, false, kindClosed}}},
		{"http/1.0 closes", false,
			"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
			[]want{{200, true, kindOK}}},
		{"http/1.0 keep-alive", false,
			"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
			[]want{{200, false, kindOK}}},
		{"body until close", false,
			"HTTP/1.1 200 OK\r\n\r\nsome body",
			[]want{{200, true, kindOK}}},
		{"eof before response", false, "", []want{{0, false, kindClosed}}},
		{"truncated head", false, "HTTP/1.1 200 OK\r\nContent-", []want{{0, false, kindParse}}},
		{"truncated body", false, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok", []want{{200, false, kindClosed}}},
		{"garbage", false, "garbage\r\n\r\n", []want{{0, false, kindParse}}},
		{"bad version", false, "HTTP/2.0 200 OK\r\n\r\n", []want{{0, false, kindParse}}},
		{"bad status", false, "HTTP/1.1 2x0 OK\r\n\r\n", []want{{0, false, kindParse}}},
		{"status 99", false, "HTTP/1.1 099 OK\r\n\r\n", []want{{0, false, kindParse}}},
		{"no colon", false, "HTTP/1.1 200 OK\r\nbroken\r\n\r\n", []want{{0, false, kindParse}}},
		{"bad content-length", false, "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", []want{{0, false, kindParse}}},
		{"conflicting content-length", false, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", []want{{0, false, kindParse}}},
		{"bad chunk size", false, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n", []want{{200, false, kindParse}}},
		{"bad chunk end", false, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n", []want{{200, false, kindParse}}},
		{"upgrade", false, "HTTP/1.1 101 Switching Protocols\r\n\r\n", []want{{101, true, kindParse}}},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
		size int
	}{
		{"whole", func(r io.Reader) io.Reader { return r }, 4096},
		{"one byte", iotest.OneByteReader, 4096},
		{"half", iotest.HalfReader, 4096},
		{"small buffer", iotest.OneByteReader, 128}, // compaction at every boundary
	}
	for _, tt := range tests {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				p := respReader{buf: make([]byte, rd.size)}
				p.reset(rd.wrap(strings.NewReader(tt.raw)))
				for i, w := range tt.want {
					status, closeConn, k := p.read(tt.head)
					if got := (want{status, closeConn, k}); got != w {
						t.Fatalf("read %d: got %+v, want %+v", i, got, w)
					}
				}
				if k := tt.want[len(tt.want)-1].kind; k == kindOK {
					if p.r != p.w {
						t.Errorf("%d bytes left unread", p.w-p.r)
					}
				}
			})
		}
	}
}

func TestReadResponseHeadTooLarge(t *testing.T) {
	raw := "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 100) + "\r\nContent-Length: 0\r\n\r\n"
	p := respReader{buf: make([]byte, 64)}
	p.reset(strings.NewReader(raw))
	if _, _, k := p.read(false); k != kindParse {
		t.Errorf("got kind %d, want parse", k)
	}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		path    string
		headers [][2]string
		body    []byte
		want    string
	}{
		{"get", "GET", "/safe", [][2]string{{"User-Agent", "wafbench"}, {"Accept", "*/*"}}, nil,
			"GET /safe HTTP/1.1\r\nHost: h:1\r\nUser-Agent: wafbench\r\nAccept: */*\r\n\r\n"},
		{"post", "POST", "/form", [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}, []byte("a=b"),
			"POST /form HTTP/1.1\r\nHost: h:1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=b"},
		{"empty body", "POST", "/", nil, []byte{},
			"POST / HTTP/1.1\r\nHost: h:1\r\nContent-Length: 0\r\n\r\n"},
		{"own host and length", "POST", "/", [][2]string{{"host", "x"}, {"content-length", "1"}}, []byte("a"),
			"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\n\r\na"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Build(tt.method, tt.path, tt.headers, tt.body, "h:1")
			if got := string(r.Raw); got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
			if r.ExpectStatus != 200 {
				t.Errorf("ExpectStatus: got %d, want 200", r.ExpectStatus)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	good := Options{Target: "127.0.0.1:80", Conns: 1, Duration: 1}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"good", func(*Options) {}, ""},
		{"conns 0", func(o *Options) { o.Conns = 0 }, "conns: want 1..1024, got 0"},
		{"conns 1025", func(o *Options) { o.Conns = 1025 }, "conns: want 1..1024, got 1025"},
		{"target", func(o *Options) { o.Target = "localhost" }, `target: want host:port, got "localhost"`},
		{"duration", func(o *Options) { o.Duration = 0 }, "duration: want > 0, got 0s"},
		{"warmup", func(o *Options) { o.Warmup = -1 }, "warmup: want >= 0, got -1ns"},
		{"max", func(o *Options) { o.MaxRequests = -1 }, "max_requests: want >= 0 (0 = no cap), got -1"},
		{"rate", func(o *Options) { o.Rate = -5 }, "rate: want >= 0 req/s (0 = closed loop), got -5"},
		{"timeout", func(o *Options) { o.Timeout = -1 }, "timeout: want >= 0 (0 = 5s), got -1ns"},
		{"conn mode per-request", func(o *Options) { o.ConnMode = ConnPerRequest }, ""},
		{"conn mode", func(o *Options) { o.ConnMode = "close" }, `conn_mode: want keepalive or per-request, got "close"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.edit(&o)
			got := ""
			if err := o.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseConnMode(t *testing.T) {
	tests := []struct {
		in      string
		want    ConnMode
		wantErr string
	}{
		{"", ConnKeepAlive, ""},
		{"keepalive", ConnKeepAlive, ""},
		{"per-request", ConnPerRequest, ""},
		{"keep-alive", "", `want keepalive or per-request, got "keep-alive"`},
		{"Per-Request", "", `want keepalive or per-request, got "Per-Request"`},
	}
	for _, tt := range tests {
		got, err := ParseConnMode(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.wantErr {
			t.Errorf("ParseConnMode(%q): got %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.wantErr)
		}
	}
}
