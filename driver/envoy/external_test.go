package envoy

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestSidecarAddress(t *testing.T) {
	long := "unix:/" + strings.Repeat("x", maxUnixPath)
	tests := []struct {
		listen, want, wantErr string
	}{
		{listen: "unix:/tmp/x.sock", want: "path:/tmp/x.sock"},
		{listen: "tcp:127.0.0.1:9001", want: "127.0.0.1:9001"},
		{listen: "unix:x.sock", wantErr: "absolute"},
		{listen: long, wantErr: "longer than"},
		{listen: "tcp:10.0.0.1:9001", wantErr: "loopback"},
		{listen: "tcp:127.0.0.1:0", wantErr: "loopback"},
		{listen: "127.0.0.1:9001", wantErr: "want unix:PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.listen[:min(len(tt.listen), 24)], func(t *testing.T) {
			a, err := sidecarAddress(tt.listen)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("sidecarAddress(%q) error = %v, want %q", tt.listen, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := "path:" + a.GetPipe().GetPath()
			if sa := a.GetSocketAddress(); sa != nil {
				got = sa.GetAddress() + ":" + strconv.FormatUint(uint64(sa.GetPortValue()), 10)
			}
			if got != tt.want {
				t.Errorf("sidecarAddress(%q) = %q, want %q", tt.listen, got, tt.want)
			}
		})
	}
}

// TestExternalBootstrap checks what the external modes' bootstraps say:
// the processing mode, fail-closed unless asked, the body limits, the
// HTTP/2 cluster at the server's address, and no module.
func TestExternalBootstrap(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.conf")
	if err := os.WriteFile(rules, []byte(minimalRules), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		c    Config
		want []string
		not  []string
	}{
		{
			name: "ext_proc-uds",
			c:    Config{Mode: ExtProc, Sidecar: &Sidecar{Listen: "unix:" + filepath.Join(dir, "s.sock")}},
			want: []string{"envoy.filters.http.ext_proc", "request_header_mode: SEND", "response_header_mode: SKIP",
				"request_body_mode: BUFFERED", "request_trailer_mode: SKIP", "response_trailer_mode: SKIP",
				"message_timeout: 30s", "pipe:", "http2_protocol_options: {}", "request_body_buffer_limit: \"1048576\""},
			not: []string{"failure_mode_allow", "dynamic_modules", "response_body_mode"},
		},
		{
			name: "ext_proc-inspect-response",
			c:    Config{Mode: ExtProc, InspectResponse: true, Sidecar: &Sidecar{Listen: "unix:" + filepath.Join(dir, "s.sock")}},
			want: []string{"response_header_mode: SEND", "request_body_mode: BUFFERED"},
			not:  []string{"response_body_mode"},
		},
		{
			name: "ext_authz-tcp-fail-open",
			c:    Config{Mode: ExtAuthz, Sidecar: &Sidecar{Listen: "tcp:127.0.0.1:9001", FailureModeAllow: true}},
			want: []string{"envoy.filters.http.ext_authz", "transport_api_version: V3", "max_request_bytes: 1048576",
				"pack_as_bytes: true", "failure_mode_allow: true", "code: ServiceUnavailable", "port_value: 9001", "timeout: 30s"},
			not: []string{"allow_partial_message: true", "dynamic_modules", "request_body_buffer_limit"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.UpstreamAddr, tt.c.RulesFile, tt.c.MaxBodyBytes = "127.0.0.1:18080", rules, 1<<20
			b, err := bootstrap(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			y, err := marshalYAML(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(y), w) {
					t.Errorf("bootstrap lacks %q:\n%s", w, y)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(string(y), n) {
					t.Errorf("bootstrap has %q:\n%s", n, y)
				}
			}
			if env := Env(tt.c); env != nil {
				t.Errorf("Env = %v, want none (no module)", env)
			}
		})
	}
}

func TestExternalValidate(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.conf")
	if err := os.WriteFile(rules, []byte(minimalRules), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := &Sidecar{Listen: "unix:" + filepath.Join(dir, "s.sock")}
	tests := []struct {
		name    string
		c       Config
		wantErr string
	}{
		{"no sidecar", Config{Mode: ExtProc, RulesFile: rules}, "sidecar is set for, and only for"},
		{"sidecar on a module", Config{Mode: Coraza, RulesFile: rules, Sidecar: sock}, "sidecar is set for, and only for"},
		{"no rules", Config{Mode: ExtAuthz, Sidecar: sock}, "rules file not set"},
		{"bad listen", Config{Mode: ExtAuthz, RulesFile: rules, Sidecar: &Sidecar{Listen: "tcp:8.8.8.8:1"}}, "loopback"},
		{"meter", Config{Mode: ExtProc, RulesFile: rules, Sidecar: sock, MeterDir: dir}, "meter wraps native modules only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.UpstreamAddr = "127.0.0.1:18080"
			err := tt.c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestSidecarConfigIsTheModuleFilterConfig(t *testing.T) {
	c := Config{Mode: ExtProc, RulesFile: "/r/main.conf", MaxBodyBytes: 4096, MatchLog: true, InspectResponse: true}
	got, err := SidecarConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"rules_file":"/r/main.conf","inspect_response":true,"max_body_bytes":4096,"match_log":true}`
	if string(got) != want {
		t.Errorf("SidecarConfig = %s, want %s", got, want)
	}
}

func TestParseTransport(t *testing.T) {
	for in, want := range map[string]Transport{"": UDS, "uds": UDS, "tcp": TCP} {
		if got, err := ParseTransport(in); err != nil || got != want {
			t.Errorf("ParseTransport(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseTransport("quic"); err == nil || !strings.Contains(err.Error(), "want uds or tcp") {
		t.Errorf("ParseTransport(quic) error = %v", err)
	}
}
