package engine

import (
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestParseAddr(t *testing.T) {
	for _, tc := range []struct {
		in       string
		wantIP   string
		wantPort int
		wantErr  bool
	}{
		{"127.0.0.1:54321", "127.0.0.1", 54321, false},
		{"[::1]:80", "::1", 80, false},
		{"[fe80::1%eth0]:443", "fe80::1%eth0", 443, false},
		{"10.1.2.3", "10.1.2.3", 0, false},
		{"::1", "::1", 0, false},
		{"[::1]", "::1", 0, false},
		{"127.0.0.1:99999", "", 0, true},
		{"/tmp/envoy.sock", "", 0, true},
		{"envoy://internal_listener/", "", 0, true},
		{"", "", 0, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			ip, port, err := ParseAddr(tc.in)
			if ip != tc.wantIP || port != tc.wantPort || (err != nil) != tc.wantErr {
				t.Errorf("ParseAddr(%q): got %q, %d, %v; want %q, %d, err=%v", tc.in, ip, port, err, tc.wantIP, tc.wantPort, tc.wantErr)
			}
		})
	}
}

func TestMapHeaders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     [][2]string
		wantRL requestLine
		want   [][2]string
	}{
		{
			name:   "http1 request",
			in:     [][2]string{{":authority", "example.com"}, {":path", "/a?b=c"}, {":method", "GET"}, {":scheme", "http"}, {"user-agent", "ua"}, {"accept", "*/*"}},
			wantRL: requestLine{Method: "GET", Path: "/a?b=c", Scheme: "http", Authority: "example.com"},
			want:   [][2]string{{"user-agent", "ua"}, {"accept", "*/*"}, {"Host", "example.com"}},
		},
		{
			name:   "explicit host wins",
			in:     [][2]string{{":authority", "a"}, {"host", "b"}},
			wantRL: requestLine{Authority: "a"},
			want:   [][2]string{{"host", "b"}},
		},
		{
			name:   "unknown pseudo dropped",
			in:     [][2]string{{":protocol", "websocket"}, {"x", "y"}},
			wantRL: requestLine{},
			want:   [][2]string{{"x", "y"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rl, got := MapHeaders(nil, tc.in)
			if rl != tc.wantRL {
				t.Errorf("request line: got %+v, want %+v", rl, tc.wantRL)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("headers: got %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("header %d: got %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

var (
	miniOnce sync.Once
	miniWAF  *WAF
	miniErr  error
)

func loadMini(tb testing.TB) *WAF {
	tb.Helper()
	miniOnce.Do(func() {
		p, err := filepath.Abs(filepath.Join("testdata", "mini.conf"))
		if err != nil {
			miniErr = err
			return
		}
		miniWAF, miniErr = New(Config{RulesFile: p, MaxBodyBytes: 4096})
	})
	if miniErr != nil {
		tb.Fatalf("load testdata/mini.conf: %v", miniErr)
	}
	return miniWAF
}

// splitHeaders turns "k:v\n" lines into pairs; a leading ':' belongs to the
// name (pseudo-headers).
func splitHeaders(raw string) [][2]string {
	var hs [][2]string
	for _, line := range strings.Split(raw, "\n") {
		if line == "" {
			continue
		}
		i := strings.IndexByte(line[1:], ':')
		if i < 0 {
			hs = append(hs, [2]string{line, ""})
			continue
		}
		hs = append(hs, [2]string{line[:i+1], line[i+2:]})
	}
	return hs
}

// FuzzMapRequest checks the Go request-mapping code (address parsing, header
// mapping, feeding a transaction) for panics and invariants.
func FuzzMapRequest(f *testing.F) {
	f.Add(":method:GET\n:path:/safe\n:authority:localhost\nuser-agent:ua\naccept:*/*", "127.0.0.1:54321", []byte(nil))
	f.Add(":method:POST\n:path:/json\ncontent-type:application/json", "[::1]:80", []byte(`{"a":"attack"}`))
	f.Add("x-waf-benchmark:phase1-block\n:authority:a\nhost:b", "10.0.0.1", []byte("x=1"))
	w := loadMini(f)
	f.Fuzz(func(t *testing.T, rawHeaders, addr string, body []byte) {
		in := splitHeaders(rawHeaders)
		rl, out := MapHeaders(nil, in)

		// Invariants of MapHeaders.
		hasHost, regular := false, 0
		var want requestLine
		for _, h := range in {
			switch {
			case h[0] == ":method":
				want.Method = h[1]
			case h[0] == ":path":
				want.Path = h[1]
			case h[0] == ":scheme":
				want.Scheme = h[1]
			case h[0] == ":authority":
				want.Authority = h[1]
			case strings.HasPrefix(h[0], ":"):
			default:
				regular++
				hasHost = hasHost || strings.EqualFold(h[0], "host")
			}
		}
		if rl != want {
			t.Fatalf("request line: got %+v, want %+v", rl, want)
		}
		wantLen := regular
		if !hasHost && rl.Authority != "" {
			wantLen++
			if last := out[len(out)-1]; last != [2]string{"Host", rl.Authority} {
				t.Fatalf("Host from :authority: got %q", last)
			}
		}
		if len(out) != wantLen {
			t.Fatalf("mapped headers: got %d, want %d (%q)", len(out), wantLen, out)
		}
		for _, h := range out {
			if strings.HasPrefix(h[0], ":") {
				t.Fatalf("pseudo-header %q passed to the engine", h[0])
			}
		}

		// Invariants of ParseAddr.
		ip, port, err := ParseAddr(addr)
		if err != nil {
			if ip != "" || port != 0 {
				t.Fatalf("ParseAddr(%q) error %v with ip %q port %d", addr, err, ip, port)
			}
		} else {
			a, perr := netip.ParseAddr(ip)
			if perr != nil {
				t.Fatalf("ParseAddr(%q) ip %q does not parse: %v", addr, ip, perr)
			}
			if port < 0 || port > 65535 {
				t.Fatalf("ParseAddr(%q) port %d out of range", addr, port)
			}
			ip2, port2, err2 := ParseAddr(netip.AddrPortFrom(a, uint16(port)).String())
			if err2 != nil || ip2 != ip || port2 != port {
				t.Fatalf("ParseAddr round trip of %q: got %q %d %v", addr, ip2, port2, err2)
			}
		}

		// Feeding the engine never panics and verdicts are well formed.
		tx := w.NewTx()
		defer tx.Close()
		tx.ProcessConnection(ip, port, "127.0.0.1", 8080)
		tx.ProcessURI(rl.Path, rl.Method, "HTTP/1.1")
		for _, h := range out {
			tx.AddHeader(h[0], h[1])
		}
		check := func(v *Verdict, phase int) {
			if v != nil && (v.Status < 100 || v.Status > 599 || v.Phase != phase && v.Phase != 1) {
				t.Fatalf("bad verdict %+v in phase %d", v, phase)
			}
		}
		check(tx.ProcessRequestHeaders(), 1)
		v, err := tx.WriteBody(body)
		if err == nil {
			check(v, 2)
		}
		if len(body) > w.Config().MaxBodyBytes && (v == nil || v.Status != 413) {
			t.Fatalf("body of %d bytes over limit %d: got %+v", len(body), w.Config().MaxBodyBytes, v)
		}
		check(tx.ProcessRequestBody(), 2)
		tx.ProcessLogging()
	})
}
