package load

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"wafbench/driver/downstream"
)

// startHTTP serves h over protocol p with Go's own HTTP/1.1 and HTTP/2
// servers (an implementation independent of ours) until the test ends, and
// returns the address.
func startHTTP(t *testing.T, p downstream.Protocol, h http.Handler) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	protos := new(http.Protocols)
	switch p {
	case downstream.H1TLS:
		protos.SetHTTP1(true)
	case downstream.H2TLS:
		protos.SetHTTP2(true)
	case downstream.H2C:
		protos.SetUnencryptedHTTP2(true)
	default:
		protos.SetHTTP1(true)
	}
	srv.Config.Protocols = protos
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are what some tests want
	if p.TLS() {
		srv.EnableHTTP2 = p.HTTP2()
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// echoCounter answers 200 "ok" (or the status in ?status=), after reading the
// whole body, and counts requests and body bytes by protocol.
type echoCounter struct {
	requests, bodyBytes atomic.Int64
	mu                  sync.Mutex
	protos              map[string]int
	hosts               map[string]int
}

func (e *echoCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		return // the client went away mid-body (the cap was reached)
	}
	e.bodyBytes.Add(n)
	e.requests.Add(1)
	e.mu.Lock()
	if e.protos == nil {
		e.protos, e.hosts = map[string]int{}, map[string]int{}
	}
	e.protos[r.Proto]++
	e.hosts[r.Host+" "+r.Header.Get("User-Agent")]++
	e.mu.Unlock()
	if s := r.URL.Query().Get("status"); s != "" {
		var code int
		fmt.Sscan(s, &code)
		w.WriteHeader(code)
	}
	w.Write([]byte("ok"))
}

// TestRunDownstream drives Go's servers over every protocol with GETs and
// with a body larger than HTTP/2's default windows, and checks that the
// client and the server count the same requests and bytes, over the
// protocol asked for.
func TestRunDownstream(t *testing.T) {
	body := bytes.Repeat([]byte("b"), 100_000)
	tests := []struct {
		p         downstream.Protocol
		streams   int
		wantProto string
	}{
		{downstream.H1TLS, 0, "HTTP/1.1"},
		{downstream.H2TLS, 4, "HTTP/2.0"},
		{downstream.H2C, 4, "HTTP/2.0"},
		{downstream.H2C, 1, "HTTP/2.0"},
	}
	for _, tt := range tests {
		for _, post := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/streams=%d/post=%v", tt.p, tt.streams, post), func(t *testing.T) {
				e := &echoCounter{}
				addr := startHTTP(t, tt.p, e)
				req := get(addr)
				n := int64(300)
				if post {
					req = Build("POST", "/form", [][2]string{{"User-Agent", "wafbench"}, {"Content-Type", "text/plain"}}, body, addr)
					n = 40
				}
				opts := Options{Target: addr, Conns: 2, Duration: forever, Timeout: forever, MaxRequests: n, Downstream: tt.p, Streams: tt.streams}
				res, err := Run(context.Background(), opts, req)
				if err != nil {
					t.Fatal(err)
				}
				if res.Requests != n || len(res.Errors) != 0 || res.Statuses[200] != n {
					t.Fatalf("Requests %d, Errors %v, Statuses %v; want %d of 200 and no error", res.Requests, res.Errors, res.Statuses, n)
				}
				if res.Hist.TotalCount() != n || sum(res.PerSecond) != n {
					t.Errorf("histogram %d, per-second %d; want %d", res.Hist.TotalCount(), sum(res.PerSecond), n)
				}
				// Streams in flight when the cap was reached were sent too.
				inFlight := int64(2 * max(tt.streams, 1))
				if got := e.requests.Load(); got < n || got > n+inFlight {
					t.Errorf("server saw %d requests, want %d..%d", got, n, n+inFlight)
				}
				if post {
					if got := e.bodyBytes.Load(); got != e.requests.Load()*int64(len(body)) {
						t.Errorf("server read %d body bytes over %d requests, want %d each", got, e.requests.Load(), len(body))
					}
				}
				e.mu.Lock()
				defer e.mu.Unlock()
				if len(e.protos) != 1 || e.protos[tt.wantProto] == 0 {
					t.Errorf("server saw protocols %v, want only %s", e.protos, tt.wantProto)
				}
				if want := addr + " wafbench"; len(e.hosts) != 1 || e.hosts[want] == 0 {
					t.Errorf("server saw host and user agent %v, want only %q", e.hosts, want)
				}
			})
		}
	}
}

// TestRunH2Streams: a server that answers only once it holds 8 requests at
// once completes with one connection of 8 streams, so they are concurrent.
func TestRunH2Streams(t *testing.T) {
	const streams = 8
	var mu sync.Mutex
	waiting := 0
	release := make(chan struct{})
	addr := startHTTP(t, downstream.H2C, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		waiting++
		if waiting == streams {
			close(release)
		}
		mu.Unlock()
		select {
		case <-release:
		case <-time.After(30 * time.Second):
			w.WriteHeader(http.StatusGatewayTimeout)
		}
	}))
	opts := Options{Target: addr, Conns: 1, Duration: forever, Timeout: forever, MaxRequests: 100, Downstream: downstream.H2C, Streams: streams}
	res, err := Run(context.Background(), opts, get(addr))
	if err != nil {
		t.Fatal(err)
	}
	if res.Statuses[200] != 100 {
		t.Errorf("Statuses %v, want 100 of 200 (504: the streams were not concurrent)", res.Statuses)
	}
}

// TestRunH2Mix: over HTTP/2 each stream's response is checked against its
// own class, and a server reset of a stream counts as "reset".
func TestRunH2Mix(t *testing.T) {
	addr := startHTTP(t, downstream.H2TLS, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/deny":
			w.WriteHeader(http.StatusForbidden)
		case "/reset":
			panic(http.ErrAbortHandler) // Go's server resets the stream
		}
		w.Write([]byte("ok"))
	}))
	mk := func(name, path string, expect, weight int) Class {
		r := Build("GET", path, nil, nil, addr)
		r.Name, r.ExpectStatus = name, expect
		return Class{Request: r, Weight: weight}
	}
	classes := []Class{mk("ok", "/ok", 200, 3), mk("deny", "/deny", 403, 1), mk("reset", "/reset", 200, 1)}
	opts := Options{Target: addr, Conns: 2, Duration: forever, Timeout: forever, MaxRequests: 400, Downstream: downstream.H2TLS, Streams: 4, Seed: 3}
	res, err := RunMix(context.Background(), opts, classes)
	if err != nil {
		t.Fatal(err)
	}
	ok, deny, reset := res.Classes[0], res.Classes[1], res.Classes[2]
	if ok.Requests == 0 || deny.Requests == 0 || len(ok.Errors)+len(deny.Errors) != 0 {
		t.Errorf("ok %d %v, deny %d %v: want requests and no errors", ok.Requests, ok.Errors, deny.Requests, deny.Errors)
	}
	if reset.Requests != 0 || reset.Errors["reset"] == 0 || len(reset.Errors) != 1 {
		t.Errorf("reset: Requests %d, Errors %v; want 0 and only reset", reset.Requests, reset.Errors)
	}
	if ok.Statuses[200] != ok.Requests || deny.Statuses[403] != deny.Requests {
		t.Errorf("statuses ok %v deny %v", ok.Statuses, deny.Statuses)
	}
}

// TestRunTLSVerify: with a certificate pool the server's certificate is
// checked (a server whose certificate is not in it is refused before any
// load), and a server that does not agree to h2 is refused over h2-tls.
func TestRunTLSVerify(t *testing.T) {
	e := &echoCounter{}
	addr := startHTTP(t, downstream.H1TLS, e)
	cert, err := downstream.WriteCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Target: addr, Conns: 1, Duration: forever, Timeout: forever, MaxRequests: 1, Downstream: downstream.H1TLS, TLS: cert.ClientConfig(downstream.H1TLS)}
	if _, err := Run(context.Background(), opts, get(addr)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("foreign certificate: error %v, want a certificate error", err)
	}
	opts = Options{Target: addr, Conns: 1, Duration: forever, Timeout: forever, MaxRequests: 1, Downstream: downstream.H2TLS}
	if _, err := Run(context.Background(), opts, get(addr)); err == nil || !strings.Contains(err.Error(), "no application protocol") {
		t.Errorf("server without h2: error %v, want an ALPN error", err)
	}
	if e.requests.Load() != 0 {
		t.Errorf("server saw %d requests, want 0", e.requests.Load())
	}
}

func TestValidateDownstream(t *testing.T) {
	base := Options{Target: "127.0.0.1:1", Conns: 1, Duration: time.Second}
	tests := []struct {
		edit    func(*Options)
		wantErr string
	}{
		{func(o *Options) { o.Downstream = "h3" }, "downstream: want one of"},
		{func(o *Options) { o.Streams = 2 }, "streams: h1 carries one request"},
		{func(o *Options) { o.Downstream, o.Streams = downstream.H2C, MaxStreams+1 }, "streams: want 1..256"},
		{func(o *Options) { o.Downstream, o.Rate, o.Arrival = downstream.H2TLS, 100, ArrivalPoisson }, ""},
		{func(o *Options) { o.Downstream, o.ConnMode = downstream.H2C, ConnPerRequest }, "conn_mode: h2c keeps"},
		{func(o *Options) { o.Downstream, o.Streams = downstream.H2C, 256 }, ""},
	}
	for _, tt := range tests {
		o := base
		tt.edit(&o)
		err := o.Validate()
		if (tt.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Validate(%+v) = %v, want %q", o, err, tt.wantErr)
		}
	}
}

// TestToH2 checks the conversion of serialized HTTP/1.1 requests.
func TestToH2(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		want     []string // decoded header fields, "name: value"
		wantBody string
		wantErr  string
	}{
		{"get", "GET /a?b=1 HTTP/1.1\r\nHost: x:8\r\nUser-Agent: u\r\nConnection: keep-alive\r\n\r\n",
			[]string{":method: GET", ":scheme: https", ":authority: x:8", ":path: /a?b=1", "user-agent: u"}, "", ""},
		{"post", "POST /f HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc",
			[]string{":method: POST", ":scheme: https", ":authority: x", ":path: /f", "content-type: text/plain", "content-length: 3"}, "abc", ""},
		{"chunked", "POST /f HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTE: trailers\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
			[]string{":method: POST", ":scheme: https", ":authority: x", ":path: /f", "te: trailers"}, "abcde", ""},
		{"connection tokens", "GET / HTTP/1.1\r\nHost: x\r\nConnection: X-Hop\r\nX-Hop: 1\r\nTE: gzip\r\nX-End: 2\r\n\r\n",
			[]string{":method: GET", ":scheme: https", ":authority: x", ":path: /", "x-end: 2"}, "", ""},
		{"no host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", nil, "", "no Host header"},
		{"bad line", "GET /\r\nHost: x\r\n\r\n", nil, "", "request line"},
		{"short body", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nabc", nil, "", "content-length 9"},
		{"gzip te", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", nil, "", "only chunked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := toH2([]byte(tt.raw), "https")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			h2Blocks([]h2req{r})
			r = h2reqOf(t, []h2req{r})[0]
			if got := decodeAll(t, hpack.NewDecoder(4096, nil), r.literal); got != strings.Join(tt.want, "\n") {
				t.Errorf("fields\n%s\nwant\n%s", got, strings.Join(tt.want, "\n"))
			}
			if string(r.body) != tt.wantBody {
				t.Errorf("body %q, want %q", r.body, tt.wantBody)
			}
			if r.literal[0]&0xe0 == 0x20 {
				t.Errorf("block starts with a dynamic table size update: % x", r.literal[:2])
			}
		})
	}
}

// h2reqOf returns reqs after h2Blocks, failing when no class got indexed
// blocks.
func h2reqOf(t *testing.T, reqs []h2req) []h2req {
	t.Helper()
	h2Blocks(reqs)
	for i, r := range reqs {
		if r.first == nil || r.indexed == nil {
			t.Fatalf("class %d: no first or indexed block", i)
		}
	}
	return reqs
}

// decodeAll decodes one header block with dec as "name: value" lines.
func decodeAll(t *testing.T, dec *hpack.Decoder, block []byte) string {
	t.Helper()
	fs, err := dec.DecodeFull(block)
	if err != nil {
		t.Fatalf("decode % x: %v", block, err)
	}
	var lines []string
	for _, f := range fs {
		lines = append(lines, f.Name+": "+f.Value)
	}
	return strings.Join(lines, "\n")
}

// TestH2Blocks: one server decoder fed the blocks a connection sends — the
// first blocks in class order, interleaved with literal ones, then only
// indexed blocks — decodes every request's own fields, and the indexed
// blocks are much shorter than the literal ones.
func TestH2Blocks(t *testing.T) {
	mk := func(path, ua string) h2req {
		r, err := toH2(Build("GET", path, [][2]string{{"User-Agent", ua}, {"Accept", "*/*"}, {"Cookie", "session=0123456789abcdef"}}, nil, "x:1").Raw, "http")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	reqs := h2reqOf(t, []h2req{mk("/a", "agent-1"), mk("/b?q=2", "agent-1"), mk("/c", "agent-2")})
	want := make([]string, len(reqs))
	for i, r := range reqs {
		want[i] = decodeAll(t, hpack.NewDecoder(4096, nil), r.literal)
	}
	dec := hpack.NewDecoder(4096, nil)
	h := &h2conn{classes: len(reqs)}
	for _, ci := range []int{1, 0, 2, 1, 1, 2, 0, 2, 1, 0} {
		if got := decodeAll(t, dec, h.block(&reqs[ci], ci)); got != want[ci] {
			t.Fatalf("class %d after %d primed: fields\n%s\nwant\n%s", ci, h.primed, got, want[ci])
		}
	}
	if h.primed != len(reqs) {
		t.Errorf("primed %d, want %d", h.primed, len(reqs))
	}
	for i, r := range reqs {
		if len(r.indexed) > len(r.fields) || len(r.literal) < 3*len(r.indexed) {
			t.Errorf("class %d: indexed block %d bytes, literal %d, for %d fields", i, len(r.indexed), len(r.literal), len(r.fields))
		}
	}
	// The server shrinks its table: literal blocks from then on, the next
	// one emptying the table first.
	h.literal, h.sizeUpdate = true, true
	if got := decodeAll(t, dec, h.block(&reqs[0], 0)); got != want[0] {
		t.Errorf("after the size update: fields\n%s\nwant\n%s", got, want[0])
	}
	big := make([]h2req, 1)
	big[0] = mk("/"+strings.Repeat("p", h2IndexBudget), "a")
	if h2Blocks(big); big[0].first != nil {
		t.Errorf("fields over the %d-byte budget got indexed blocks", h2IndexBudget)
	}
}

// startH2Stub serves a minimal HTTP/2 responder made from the Framer: it
// answers every request with HEADERS (":status: 200", content-length 2)
// and DATA "ok", reading frames without parsing their payloads, so it
// allocates nothing per request and benchmarks measure the client.
func startH2Stub(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "2"})
	resp := block.Bytes()
	ok := []byte("ok")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br, bw := bufio.NewReaderSize(c, 64<<10), bufio.NewWriterSize(c, 64<<10)
				if _, err := br.Discard(len(http2.ClientPreface)); err != nil {
					return
				}
				fr := http2.NewFramer(bw, br)
				fr.WriteSettings()
				for {
					if br.Buffered() == 0 {
						if bw.Flush() != nil {
							return
						}
					}
					fh, err := fr.ReadFrameHeader()
					if err != nil {
						return
					}
					if _, err := br.Discard(int(fh.Length)); err != nil {
						return
					}
					switch {
					case fh.Type == http2.FrameSettings && !fh.Flags.Has(http2.FlagSettingsAck):
						fr.WriteSettingsAck()
					case (fh.Type == http2.FrameHeaders || fh.Type == http2.FrameData) && fh.Flags.Has(http2.FlagDataEndStream):
						fr.WriteHeaders(http2.HeadersFrameParam{StreamID: fh.StreamID, BlockFragment: resp, EndHeaders: true})
						fr.WriteData(fh.StreamID, true, ok)
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestH2SteadyStateAllocs checks that an HTTP/2 run allocates at most one
// object per request (the Framer's HEADERS frame) in the steady state of
// the closed loop, and at most two in the open loop (rate 20000 req/s),
// where the wait for an arrival can end in a read deadline whose error
// net allocates (at most one per arrival, h2open.go).
func TestH2SteadyStateAllocs(t *testing.T) {
	addr := startH2Stub(t)
	for _, tt := range []struct{ rate, most float64 }{{0, 1}, {20000, 2}} {
		rate := tt.rate
		t.Run(fmt.Sprintf("rate=%v", rate), func(t *testing.T) {
			mallocs := func(n int64) uint64 {
				opts := Options{Target: addr, Conns: 2, Streams: 4, Duration: time.Minute, MaxRequests: n, Timeout: time.Minute,
					Rate: rate, Downstream: downstream.H2C}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				res, err := Run(context.Background(), opts, get(addr))
				if err != nil {
					t.Fatal(err)
				}
				if res.Requests != n {
					t.Fatalf("Requests %d, Errors %v; want %d", res.Requests, res.Errors, n)
				}
				runtime.ReadMemStats(&after)
				return after.Mallocs - before.Mallocs
			}
			mallocs(1000)
			small, large := mallocs(1000), mallocs(11000)
			if perReq := (float64(large) - float64(small)) / 10000; perReq > tt.most+0.05 {
				t.Errorf("%.3f allocations per request (%d for 1000, %d for 11000), want ≤ %v", perReq, small, large, tt.most)
			}
			t.Logf("%.3f allocations per request", (float64(large)-float64(small))/10000)
		})
	}
}

// BenchmarkH2 drives the stub responder over h2c: Conns connections ×
// Streams streams, closed loop.
func BenchmarkH2(b *testing.B) {
	addr := startH2Stub(b)
	for _, cs := range [][2]int{{1, 1}, {1, 16}, {4, 16}} {
		b.Run(fmt.Sprintf("conns=%d/streams=%d", cs[0], cs[1]), func(b *testing.B) {
			opts := Options{Target: addr, Conns: cs[0], Streams: cs[1], Duration: time.Hour, MaxRequests: int64(b.N), Downstream: downstream.H2C}
			req := get(addr)
			b.ReportAllocs()
			b.ResetTimer()
			res, err := Run(context.Background(), opts, req)
			if err != nil {
				b.Fatal(err)
			}
			if res.Requests != int64(b.N) || len(res.Errors) != 0 {
				b.Fatalf("got %d requests, errors %v; want %d", res.Requests, res.Errors, b.N)
			}
			b.ReportMetric(res.ReqPerS(), "req/s")
		})
	}
}
