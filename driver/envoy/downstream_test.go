package envoy

import (
	"bytes"
	"strings"
	"testing"

	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"wafbench/driver/downstream"
)

// withDownstream is testConfig(m) serving protocol p (with a fresh
// certificate for the TLS protocols).
func withDownstream(t *testing.T, m Mode, p downstream.Protocol) Config {
	t.Helper()
	c := testConfig(t, m)
	c.Downstream = p
	if p.TLS() {
		cert, err := downstream.WriteCert(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		c.CertFile, c.KeyFile = cert.CertFile, cert.KeyFile
	}
	return c
}

// TestDownstreamBootstrap: the zero value and "h1" give today's bootstrap
// byte for byte; the other protocols change only the listener's codec and,
// with TLS, its transport socket, the same for every mode.
func TestDownstreamBootstrap(t *testing.T) {
	for _, m := range []Mode{Passthrough, ModSecurity, Coraza} {
		t.Run(string(m), func(t *testing.T) {
			base := testConfig(t, m)
			zero, err := bootstrap(base)
			if err != nil {
				t.Fatal(err)
			}
			zeroYAML, _ := marshalYAML(zero)
			tests := []struct {
				p         downstream.Protocol
				wantCodec hcm.HttpConnectionManager_CodecType
				wantALPN  string
			}{
				{downstream.H1, hcm.HttpConnectionManager_AUTO, ""},
				{downstream.H1TLS, hcm.HttpConnectionManager_HTTP1, "http/1.1"},
				{downstream.H2TLS, hcm.HttpConnectionManager_HTTP2, "h2"},
				{downstream.H2C, hcm.HttpConnectionManager_HTTP2, ""},
			}
			for _, tt := range tests {
				c := withDownstream(t, m, tt.p)
				c.RulesFile, c.ModuleSearchPath = base.RulesFile, base.ModuleSearchPath
				b, err := bootstrap(c)
				if err != nil {
					t.Fatalf("%s: %v", tt.p, err)
				}
				y, _ := marshalYAML(b)
				if tt.p == downstream.H1 && !bytes.Equal(y, zeroYAML) {
					t.Errorf("h1: bootstrap differs from the zero value's:\n%s\nwant\n%s", y, zeroYAML)
				}
				if got := hcmOf(t, b).GetCodecType(); got != tt.wantCodec {
					t.Errorf("%s: codec_type %v, want %v", tt.p, got, tt.wantCodec)
				}
				ts := b.GetStaticResources().GetListeners()[0].GetFilterChains()[0].GetTransportSocket()
				if tt.wantALPN == "" {
					if ts != nil {
						t.Errorf("%s: transport socket %v, want none", tt.p, ts)
					}
					continue
				}
				var ctx tlsv3.DownstreamTlsContext
				if ts.GetName() != "envoy.transport_sockets.tls" {
					t.Fatalf("%s: transport socket %q, want envoy.transport_sockets.tls", tt.p, ts.GetName())
				}
				if err := ts.GetTypedConfig().UnmarshalTo(&ctx); err != nil {
					t.Fatal(err)
				}
				cc := ctx.GetCommonTlsContext()
				if got := cc.GetAlpnProtocols(); len(got) != 1 || got[0] != tt.wantALPN {
					t.Errorf("%s: alpn_protocols %v, want [%s]", tt.p, got, tt.wantALPN)
				}
				crt := cc.GetTlsCertificates()
				if len(crt) != 1 || crt[0].GetCertificateChain().GetFilename() != c.CertFile || crt[0].GetPrivateKey().GetFilename() != c.KeyFile {
					t.Errorf("%s: tls_certificates %v, want %s and %s", tt.p, crt, c.CertFile, c.KeyFile)
				}
			}
		})
	}
}

func TestDownstreamValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Config)
		wantErr string
	}{
		{"unknown", func(c *Config) { c.Downstream = "h3" }, `downstream: want one of h1, h1-tls, h2-tls, h2c, got "h3"`},
		{"no cert", func(c *Config) { c.CertFile = "" }, "downstream h2-tls: certificate file not set"},
		{"no key", func(c *Config) { c.KeyFile = "" }, "downstream h2-tls: key file not set"},
		{"missing key", func(c *Config) { c.KeyFile += ".no" }, "downstream h2-tls: key file: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := withDownstream(t, Passthrough, downstream.H2TLS)
			tt.edit(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
	if err := withDownstream(t, Passthrough, downstream.H2C).Validate(); err != nil {
		t.Errorf("h2c without certificate: %v", err)
	}
}
