package upstream

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// start serves a fresh Server on a loopback port until the test ends.
func start(t *testing.T) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := new(Server)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return s, ln.Addr().String()
}

func checkOK(t *testing.T, resp *http.Response, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resp.StatusCode, 200; got != want {
		t.Errorf("status: got %d, want %d", got, want)
	}
	if got, want := string(body), "ok"; got != want {
		t.Errorf("body: got %q, want %q", got, want)
	}
	if got, want := resp.Header.Get("Content-Type"), "text/plain"; got != want {
		t.Errorf("Content-Type: got %q, want %q", got, want)
	}
}

func TestNetHTTPClient(t *testing.T) {
	s, addr := start(t)
	url := "http://" + addr + "/x"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()

	t.Run("GET", func(t *testing.T) {
		resp, err := client.Get(url)
		checkOK(t, resp, err)
	})
	t.Run("POST content-length", func(t *testing.T) {
		resp, err := client.Post(url, "application/json", strings.NewReader(`{"a":1}`))
		checkOK(t, resp, err)
	})
	t.Run("POST chunked", func(t *testing.T) {
		// A reader of unknown length makes net/http send a chunked body.
		body := io.MultiReader(strings.NewReader("hello "), strings.NewReader("world"))
		req, _ := http.NewRequest("POST", url, body)
		if req.ContentLength != 0 {
			t.Fatalf("want unknown length, got %d", req.ContentLength)
		}
		resp, err := client.Do(req)
		checkOK(t, resp, err)
	})
	t.Run("POST 10MiB", func(t *testing.T) {
		resp, err := client.Post(url, "application/octet-stream", bytes.NewReader(make([]byte, 10<<20)))
		checkOK(t, resp, err)
	})
	t.Run("POST 10MiB chunked with expect", func(t *testing.T) {
		req, _ := http.NewRequest("POST", url, io.MultiReader(bytes.NewReader(make([]byte, 10<<20))))
		req.Header.Set("Expect", "100-continue")
		c := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 5 * time.Second}}
		defer c.CloseIdleConnections()
		resp, err := c.Do(req)
		checkOK(t, resp, err)
	})
	if got, want := s.Stats().Requests, int64(5); got != want {
		t.Errorf("Stats().Requests: got %d, want %d", got, want)
	}
	// net/http reused the keep-alive connection for the first four.
	if got := s.Stats().Conns; got != 2 {
		t.Errorf("Stats().Conns: got %d, want 2", got)
	}
}

// exchange writes raw to a fresh connection and reads until the server
// closes it or the timeout passes.
func exchange(t *testing.T, addr, raw string, halfClose bool) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	if halfClose {
		c.(*net.TCPConn).CloseWrite()
	}
	got, _ := io.ReadAll(c)
	return string(got)
}

const okKeep = respKeepAlive

func TestRaw(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
	}{
		{"GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", okKeep},
		{"pipelined 3", "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n" +
			"POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" +
			"POST /3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\nT: v\r\n\r\n",
			okKeep + okKeep + okKeep},
		{"connection close", "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", respClose},
		{"connection close case", "GET / HTTP/1.1\r\nhost: a\r\nCONNECTION: Keep-Alive, Close\r\n\r\n", respClose},
		{"http/1.0", "GET / HTTP/1.0\r\n\r\n", respClose},
		{"http/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", okKeep},
		{"expect", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi", resp100 + okKeep},
		{"garbage", "hello\r\n\r\n", respBad},
		{"bad version", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", respBad},
		{"no host", "GET / HTTP/1.1\r\n\r\n", respBad},
		{"bad header", "GET / HTTP/1.1\r\nHost: a\r\nno colon\r\n\r\n", respBad},
		{"folded header", "GET / HTTP/1.1\r\nHost: a\r\n x: y\r\n\r\n", respBad},
		{"bad content-length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", respBad},
		{"two content-lengths", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", respBad},
		{"cl and te", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", respBad},
		{"te gzip", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", respBad},
		{"bad chunk size", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", respBad},
		{"bad chunk end", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\naXY", respBad},
		{"good then bad", "GET / HTTP/1.1\r\nHost: a\r\n\r\nBAD\r\n\r\n", okKeep + respBad},
	}
	_, addr := start(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exchange(t, addr, tt.raw, true); got != tt.want {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestPipelinedOneWrite checks that three requests in one segment get three
// answers on a connection that stays open.
func TestPipelinedOneWrite(t *testing.T) {
	_, addr := start(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	req := "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	io.WriteString(c, req+req+req)
	br := bufio.NewReader(c)
	for i := range 3 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		checkOK(t, resp, nil)
	}
	// Still open: a fourth request is answered.
	io.WriteString(c, req)
	resp, err := http.ReadResponse(br, nil)
	checkOK(t, resp, err)
}

// TestSplitWrites feeds a request a byte at a time.
func TestSplitWrites(t *testing.T) {
	_, addr := start(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	raw := "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n"
	for i := range len(raw) {
		if _, err := c.Write([]byte{raw[i]}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	checkOK(t, resp, err)
}

func TestHeadTooLarge(t *testing.T) {
	s, addr := start(t)
	raw := "GET / HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("a", bufSize) + "\r\n\r\n"
	if got := exchange(t, addr, raw, false); got != respBad {
		t.Errorf("got %q, want 400", got)
	}
	if got := s.Stats().BadRequests; got != 1 {
		t.Errorf("BadRequests: got %d, want 1", got)
	}
}

// TestParserBoundaries runs every request through the parser with a tiny
// buffer and one-byte reads, so that every boundary falls everywhere.
func TestParserBoundaries(t *testing.T) {
	reqs := "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n" +
		"POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n" + strings.Repeat("x", 100) +
		"POST /3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + strings.Repeat("y", 64) + "\r\n0\r\n\r\n"
	for _, size := range []int{64, 65, 100, 4096} {
		p := parser{buf: make([]byte, size)}
		rd := strings.NewReader(reqs)
		var got int
		for {
			ev := p.step()
			if ev == evBad {
				t.Fatalf("buf %d: evBad after %d requests", size, got)
			}
			if ev == evRequest {
				got++
				continue
			}
			if ev != evNeedMore {
				continue
			}
			var one [1]byte
			n, err := rd.Read(one[:])
			if err == io.EOF {
				break
			}
			// feed a byte through fill's path
			if err := p.fill(bytes.NewReader(one[:n])); err != nil {
				t.Fatal(err)
			}
		}
		if got != 3 {
			t.Errorf("buf %d: got %d requests, want 3", size, got)
		}
	}
}

func TestServeReturnsOnListenerError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), ln) }()
	ln.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("want an error when the listener is closed under Serve")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Serve did not return")
	}
}

func BenchmarkParse(b *testing.B) {
	req := []byte("POST /json HTTP/1.1\r\nHost: 127.0.0.1:10000\r\nUser-Agent: wafbench\r\nAccept: */*\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"message\":\"cc\"}")
	p := parser{buf: make([]byte, 4096)}
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		p.r, p.w = 0, copy(p.buf, req)
		if p.step() != evRequest {
			b.Fatal("no request")
		}
	}
}
