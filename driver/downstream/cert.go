package downstream

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"wafbench/internal/atomicfile"
)

// ServerName is the DNS name in the run's certificate (besides 127.0.0.1
// and ::1) and the SNI the load engine sends.
const ServerName = "wafbench.local"

// Cert is a certificate made for one run: an ECDSA P-256 key and a
// self-signed certificate for ServerName, 127.0.0.1 and ::1, written as PEM
// files. It is its own CA: a client trusts it through Pool.
type Cert struct {
	CertFile string // PEM certificate (the chain Envoy serves)
	KeyFile  string // PEM PKCS#8 private key
	certDER  []byte
}

// certValidity is how long a run's certificate is valid; it starts an hour
// back so clock skew between processes does not matter.
const certValidity = 7 * 24 * time.Hour

// WriteCert makes a fresh key and self-signed certificate and writes them to
// dir (created if needed) as downstream-cert.pem and downstream-key.pem,
// with a .gitignore that ignores everything in dir: the key protects
// nothing but one run's loopback traffic, and is never committed.
func WriteCert(dir string) (*Cert, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("downstream certificate: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n")); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("downstream certificate: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("downstream certificate: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: ServerName, Organization: []string{"wafbench run"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{ServerName, "localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("downstream certificate: %w", err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("downstream certificate: %w", err)
	}
	c := &Cert{
		CertFile: filepath.Join(dir, "downstream-cert.pem"),
		KeyFile:  filepath.Join(dir, "downstream-key.pem"),
		certDER:  der,
	}
	if err := atomicfile.WriteFile(c.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(c.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})); err != nil {
		return nil, err
	}
	return c, nil
}

// pool is a certificate pool holding c, for a client's RootCAs.
func (c *Cert) pool() *x509.CertPool {
	p := x509.NewCertPool()
	if crt, err := x509.ParseCertificate(c.certDER); err == nil {
		p.AddCert(crt)
	}
	return p
}

// ClientConfig is the TLS configuration a client of protocol p uses against
// a listener serving c: c as the only root, ServerName as SNI, p's ALPN.
func (c *Cert) ClientConfig(p Protocol) *tls.Config {
	cfg := &tls.Config{RootCAs: c.pool(), ServerName: ServerName, MinVersion: tls.VersionTLS12}
	if a := p.ALPN(); a != "" {
		cfg.NextProtos = []string{a}
	}
	return cfg
}

// serverConfig is a TLS configuration serving c with p's ALPN (tests'
// stand-in servers).
func (c *Cert) serverConfig(p Protocol) (*tls.Config, error) {
	kp, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("downstream certificate: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{kp}, MinVersion: tls.VersionTLS12}
	if a := p.ALPN(); a != "" {
		cfg.NextProtos = []string{a}
	}
	return cfg, nil
}
