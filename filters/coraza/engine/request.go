package engine

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// request is one HTTP request as recorded by tests and benchmarks.
type request struct {
	Method     string
	Path       string // with query string
	Proto      string // "" means HTTP/1.1
	Headers    [][2]string
	Body       []byte
	ClientAddr string // "ip:port" as Envoy's source.address; "" means 127.0.0.1:40000
	ServerAddr string // "" means 127.0.0.1:8080
}

// Default endpoints used when a Request leaves them empty.
const (
	defaultClientAddr = "127.0.0.1:40000"
	defaultServerAddr = "127.0.0.1:8080"
)

// evaluate runs one whole request through the WAF (phases 1, 2 and 5) and
// returns the verdict; a request that passes gets Status 200, Phase 0, and an
// engine error gives Status 500 (Tx.Err tells them apart from a rule's 500).
func (w *WAF) evaluate(req request) Verdict {
	t := w.NewTx()
	defer t.Close()
	defer t.ProcessLogging()
	ca, sa := req.ClientAddr, req.ServerAddr
	if ca == "" {
		ca = defaultClientAddr
	}
	if sa == "" {
		sa = defaultServerAddr
	}
	cip, cport, _ := ParseAddr(ca)
	sip, sport, _ := ParseAddr(sa)
	t.ProcessConnection(cip, cport, sip, sport)
	proto := req.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	t.ProcessURI(req.Path, req.Method, proto)
	for _, h := range req.Headers {
		t.AddHeader(h[0], h[1])
	}
	if v := t.ProcessRequestHeaders(); v != nil {
		return *v
	}
	if len(req.Body) > 0 {
		if v, _ := t.WriteBody(req.Body); v != nil {
			return *v
		}
	}
	if v := t.ProcessRequestBody(); v != nil {
		return *v
	}
	return Verdict{Status: 200}
}

// errNoAddr is returned by ParseAddr for strings that are not IP addresses.
var errNoAddr = errors.New("not an IP address")

// ParseAddr splits an Envoy 1.40 address attribute into IP and port:
// "127.0.0.1:54321", "[::1]:80", or a bare IP (port 0). The IP is returned in
// canonical form, without brackets or zone-free normalisation beyond netip's.
// Anything else (pipe paths, "envoy://" internal addresses) is an error and
// yields ("", 0).
func ParseAddr(s string) (ip string, port int, err error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().String(), int(ap.Port()), nil
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.String(), 0, nil
	}
	return "", 0, fmt.Errorf("parse address %q: %w", s, errNoAddr)
}

// requestLine is what the pseudo-headers of an Envoy request carry.
type requestLine struct {
	Method    string // :method
	Path      string // :path
	Scheme    string // :scheme
	Authority string // :authority
}

// MapHeaders splits Envoy request headers into the request line (from the
// pseudo-headers) and the headers to give the engine: every non-pseudo header
// in order, with Host taken from :authority when the request has no Host
// header (HTTP/1.1 Host arrives in Envoy as :authority). Unknown
// pseudo-headers are dropped. The result appends to dst[:0].
func MapHeaders(dst [][2]string, hs [][2]string) (requestLine, [][2]string) {
	var rl requestLine
	out := dst[:0]
	hasHost := false
	for _, h := range hs {
		k := h[0]
		if strings.HasPrefix(k, ":") {
			switch k {
			case ":method":
				rl.Method = h[1]
			case ":path":
				rl.Path = h[1]
			case ":scheme":
				rl.Scheme = h[1]
			case ":authority":
				rl.Authority = h[1]
			}
			continue
		}
		if !hasHost && strings.EqualFold(k, "host") {
			hasHost = true
		}
		out = append(out, h)
	}
	if !hasHost && rl.Authority != "" {
		out = append(out, [2]string{"Host", rl.Authority})
	}
	return rl, out
}
