package downstream

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Protocol
		wantErr bool
	}{
		{"", H1, false}, {"h1", H1, false}, {"h1-tls", H1TLS, false}, {"h2-tls", H2TLS, false}, {"h2c", H2C, false},
		{"h2", "", true}, {"H1", "", true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("Parse(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestCert: the written certificate is ECDSA P-256, names ServerName and
// 127.0.0.1, and a client using ClientConfig completes a handshake with a
// server using ServerConfig, agreeing on the protocol's ALPN.
func TestCert(t *testing.T) {
	c, err := WriteCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	kp, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	crt, err := x509.ParseCertificate(kp.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if pk, ok := crt.PublicKey.(*ecdsa.PublicKey); !ok || pk.Curve != elliptic.P256() {
		t.Errorf("public key %T, want ECDSA P-256", crt.PublicKey)
	}
	if err := crt.VerifyHostname("127.0.0.1"); err != nil {
		t.Error(err)
	}
	for _, p := range []Protocol{H1TLS, H2TLS} {
		srvCfg, err := c.serverConfig(p)
		if err != nil {
			t.Fatal(err)
		}
		a, b := net.Pipe()
		srv := tls.Server(a, srvCfg)
		done := make(chan error, 1)
		go func() { done <- srv.Handshake() }()
		cl := tls.Client(b, c.ClientConfig(p))
		if err := cl.Handshake(); err != nil {
			t.Fatalf("%s: client handshake: %v", p, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("%s: server handshake: %v", p, err)
		}
		if got := cl.ConnectionState().NegotiatedProtocol; got != p.ALPN() {
			t.Errorf("%s: ALPN %q, want %q", p, got, p.ALPN())
		}
		a.Close()
		b.Close()
	}
}
