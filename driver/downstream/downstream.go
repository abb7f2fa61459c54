// Package downstream names the protocols a client can speak to the proxy
// under test (plain HTTP/1.1, HTTP/1.1 over TLS, HTTP/2 over TLS, HTTP/2
// with prior knowledge) and makes the certificate a TLS listener serves:
// one made for the run, never committed. The Envoy config (envoy) and the
// load engine (driver/load) both take their protocol names from here.
package downstream

import (
	"fmt"
	"strings"
)

// Protocol is what the client speaks on the proxy's listener. The zero
// value is H1.
type Protocol string

// The protocols.
const (
	H1    Protocol = "h1"     // HTTP/1.1 over plain TCP (today's benchmark)
	H1TLS Protocol = "h1-tls" // HTTP/1.1 over TLS, ALPN http/1.1
	H2TLS Protocol = "h2-tls" // HTTP/2 over TLS, ALPN h2
	H2C   Protocol = "h2c"    // HTTP/2 over plain TCP with prior knowledge
)

// Protocols lists every protocol in a fixed order.
var Protocols = []Protocol{H1, H1TLS, H2TLS, H2C}

// Parse returns the protocol s names; "" is H1.
func Parse(s string) (Protocol, error) {
	if s == "" {
		return H1, nil
	}
	for _, p := range Protocols {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, len(Protocols))
	for i, p := range Protocols {
		names[i] = string(p)
	}
	return "", fmt.Errorf("want one of %s, got %q", strings.Join(names, ", "), s)
}

// Or returns p, or H1 when p is empty.
func (p Protocol) Or() Protocol {
	if p == "" {
		return H1
	}
	return p
}

// TLS reports whether p runs over TLS.
func (p Protocol) TLS() bool { return p == H1TLS || p == H2TLS }

// HTTP2 reports whether p is HTTP/2.
func (p Protocol) HTTP2() bool { return p == H2TLS || p == H2C }

// ALPN is the protocol p offers in the TLS handshake ("" without TLS).
func (p Protocol) ALPN() string {
	switch p {
	case H1TLS:
		return "http/1.1"
	case H2TLS:
		return "h2"
	}
	return ""
}

// Label is p as a report names it, e.g. "HTTP/2 over TLS".
func (p Protocol) Label() string {
	switch p.Or() {
	case H1TLS:
		return "HTTP/1.1 over TLS"
	case H2TLS:
		return "HTTP/2 over TLS"
	case H2C:
		return "HTTP/2 cleartext (prior knowledge)"
	}
	return "HTTP/1.1"
}
