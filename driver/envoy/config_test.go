package envoy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	dynmodfilter "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/dynamic_modules/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"sigs.k8s.io/yaml"
)

// fakeWAF makes a rules file and an empty module file for each WAF mode,
// enough for Validate; Envoy itself is not involved.
func fakeWAF(t *testing.T) (rules, modDir string) {
	t.Helper()
	dir := t.TempDir()
	rules = filepath.Join(dir, "rules.conf")
	if err := os.WriteFile(rules, []byte("SecRuleEngine On\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []Mode{ModSecurity, Coraza, CorazaWasm} {
		if err := os.WriteFile(filepath.Join(dir, m.ModuleFile()), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rules, dir
}

func testConfig(t *testing.T, m Mode) Config {
	rules, dir := fakeWAF(t)
	c := Config{Mode: m, UpstreamAddr: "127.0.0.1:18080"}
	if m.IsWAF() {
		c.RulesFile, c.ModuleSearchPath, c.MaxBodyBytes = rules, dir, 1<<20
	}
	if m.IsExternal() {
		c.ModuleSearchPath, c.Sidecar = "", &Sidecar{Listen: UDS.ListenAddr(filepath.Join(dir, "s.sock"), "")}
	}
	return c
}

func hcmOf(t *testing.T, b *bootstrapv3.Bootstrap) *hcm.HttpConnectionManager {
	t.Helper()
	ls := b.GetStaticResources().GetListeners()
	if len(ls) != 1 || len(ls[0].GetFilterChains()) != 1 || len(ls[0].GetFilterChains()[0].GetFilters()) != 1 {
		t.Fatalf("want one listener with one filter chain and one network filter, got %v", ls)
	}
	var m hcm.HttpConnectionManager
	if err := ls[0].GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(&m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func TestParseMode(t *testing.T) {
	for _, m := range Modes {
		got, err := parseMode(string(m))
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	_, err := parseMode("x")
	want := `unknown mode "x" (want passthrough, modsecurity, coraza, coraza-wasm, ext_proc, ext_authz)`
	if err == nil || err.Error() != want {
		t.Errorf("ParseMode(x) error = %v, want %s", err, want)
	}
}

func TestBootstrap(t *testing.T) {
	tests := []struct {
		mode        Mode
		wantFilters []string
		wantRoutes  []string
	}{
		{Passthrough, []string{"envoy.filters.http.router"}, []string{"phase1-block", "upstream"}},
		{ModSecurity, []string{dynamicModuleFilterName, "envoy.filters.http.router"}, []string{"upstream"}},
		{Coraza, []string{dynamicModuleFilterName, "envoy.filters.http.router"}, []string{"upstream"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			c := testConfig(t, tt.mode)
			b, err := bootstrap(c)
			if err != nil {
				t.Fatal(err)
			}
			l := b.GetStaticResources().GetListeners()[0]
			if got := l.GetAddress().GetSocketAddress(); got.GetAddress() != "127.0.0.1" || got.GetPortValue() != 0 {
				t.Errorf("listener address %v, want 127.0.0.1 port 0", got)
			}
			if got := b.GetAdmin().GetAddress().GetSocketAddress(); got.GetAddress() != "127.0.0.1" || got.GetPortValue() != 0 {
				t.Errorf("admin address %v, want 127.0.0.1 port 0", got)
			}
			if got := b.GetAdmin().GetAccessLog(); len(got) != 0 {
				t.Errorf("admin access logs %v, want none", got)
			}

			m := hcmOf(t, b)
			if got := m.GetGenerateRequestId(); got == nil || got.GetValue() {
				t.Errorf("generate_request_id = %v, want explicit false", got)
			}
			if got := m.GetCodecType(); got != hcm.HttpConnectionManager_AUTO {
				t.Errorf("codec_type = %v, want AUTO", got)
			}
			if got := m.GetMaxRequestHeadersKb().GetValue(); got != maxRequestHeadersKB {
				t.Errorf("max_request_headers_kb = %d, want %d", got, maxRequestHeadersKB)
			}
			if got := m.GetAccessLog(); len(got) != 0 {
				t.Errorf("access logs %v, want none", got)
			}
			for _, ct := range []struct {
				name string
				got  time.Duration
			}{
				{"request_headers_timeout", m.GetRequestHeadersTimeout().AsDuration()},
				{"stream_idle_timeout", m.GetStreamIdleTimeout().AsDuration()},
				{"request_timeout", m.GetRequestTimeout().AsDuration()},
			} {
				i := slices.IndexFunc(ClientTimeouts, func(c ClientTimeout) bool { return c.Name == ct.name })
				if i < 0 || ct.got != ClientTimeouts[i].After || ct.got <= 0 {
					t.Errorf("%s = %v, want the explicit ClientTimeouts value", ct.name, ct.got)
				}
			}
			var gotFilters []string
			for _, f := range m.GetHttpFilters() {
				gotFilters = append(gotFilters, f.GetName())
			}
			if !slices.Equal(gotFilters, tt.wantFilters) {
				t.Errorf("http filters %v, want %v", gotFilters, tt.wantFilters)
			}

			vh := m.GetRouteConfig().GetVirtualHosts()
			if len(vh) != 1 {
				t.Fatalf("virtual hosts %d, want 1", len(vh))
			}
			var gotRoutes []string
			for _, r := range vh[0].GetRoutes() {
				gotRoutes = append(gotRoutes, r.GetName())
				if r.GetMatch().GetPrefix() != "/" {
					t.Errorf("route %s prefix %q, want /", r.GetName(), r.GetMatch().GetPrefix())
				}
			}
			if !slices.Equal(gotRoutes, tt.wantRoutes) {
				t.Errorf("routes %v, want %v", gotRoutes, tt.wantRoutes)
			}
			last := vh[0].GetRoutes()[len(vh[0].GetRoutes())-1]
			if got := last.GetRoute().GetCluster(); got != upstreamCluster {
				t.Errorf("last route cluster %q, want %q", got, upstreamCluster)
			}
			if tt.mode == Passthrough {
				checkBlockRoute(t, vh[0].GetRoutes()[0])
			}

			cl := b.GetStaticResources().GetClusters()
			if len(cl) != 1 || cl[0].GetName() != upstreamCluster {
				t.Fatalf("clusters %v, want one named %s", cl, upstreamCluster)
			}
			th := cl[0].GetCircuitBreakers().GetThresholds()
			if len(th) != 1 || th[0].GetMaxConnections().GetValue() != circuitBreakerMax ||
				th[0].GetMaxPendingRequests().GetValue() != circuitBreakerMax ||
				th[0].GetMaxRequests().GetValue() != circuitBreakerMax {
				t.Errorf("circuit breakers %v, want all %d", th, circuitBreakerMax)
			}
			ep := cl[0].GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
			if ep.GetAddress() != "127.0.0.1" || ep.GetPortValue() != 18080 {
				t.Errorf("endpoint %v, want 127.0.0.1:18080", ep)
			}

			if tt.mode.IsWAF() {
				checkModuleFilter(t, c, m.GetHttpFilters()[0])
			}
		})
	}
}

func checkBlockRoute(t *testing.T, r *route.Route) {
	t.Helper()
	h := r.GetMatch().GetHeaders()
	if len(h) != 1 || h[0].GetName() != BlockHeader || h[0].GetStringMatch().GetExact() != BlockValue {
		t.Errorf("block route headers %v, want %s: %s", h, BlockHeader, BlockValue)
	}
	if got := r.GetDirectResponse().GetStatus(); got != 403 {
		t.Errorf("block route status %d, want 403", got)
	}
}

func checkModuleFilter(t *testing.T, c Config, f *hcm.HttpFilter) {
	t.Helper()
	var dm dynmodfilter.DynamicModuleFilter
	if err := f.GetTypedConfig().UnmarshalTo(&dm); err != nil {
		t.Fatal(err)
	}
	if got := dm.GetDynamicModuleConfig(); got.GetName() != "wafbench_"+string(c.Mode) || !got.GetDoNotClose() {
		t.Errorf("dynamic_module_config %v, want name wafbench_%s, do_not_close", got, c.Mode)
	}
	if dm.GetFilterName() != filterName {
		t.Errorf("filter_name %q, want %q", dm.GetFilterName(), filterName)
	}
	var sv wrapperspb.StringValue
	if err := dm.GetFilterConfig().UnmarshalTo(&sv); err != nil {
		t.Fatalf("filter_config is not a StringValue: %v", err)
	}
	var got moduleFilterConfig
	if err := json.Unmarshal([]byte(sv.GetValue()), &got); err != nil {
		t.Fatalf("filter_config %q: %v", sv.GetValue(), err)
	}
	want := moduleFilterConfig{RulesFile: c.RulesFile, MaxBodyBytes: c.MaxBodyBytes}
	if got != want {
		t.Errorf("filter_config %+v, want %+v", got, want)
	}
}

func TestAccessLogOption(t *testing.T) {
	c := testConfig(t, Passthrough)
	c.AccessLog = true
	b, err := bootstrap(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := hcmOf(t, b).GetAccessLog(); len(got) != 1 {
		t.Errorf("access logs %d, want 1", len(got))
	}
}

// TestRouteTimeoutOption: the upstream route carries RouteTimeout when it is
// set and Envoy's default (no timeout field) when it is 0.
func TestRouteTimeoutOption(t *testing.T) {
	for _, d := range []time.Duration{0, 3 * time.Minute} {
		c := testConfig(t, Coraza)
		c.RouteTimeout = d
		b, err := bootstrap(c)
		if err != nil {
			t.Fatal(err)
		}
		routes := hcmOf(t, b).GetRouteConfig().GetVirtualHosts()[0].GetRoutes()
		up := routes[len(routes)-1]
		if up.GetName() != "upstream" {
			t.Fatalf("last route %q, want upstream", up.GetName())
		}
		got := up.GetRoute().GetTimeout()
		switch {
		case d == 0 && got != nil:
			t.Errorf("RouteTimeout 0: route timeout %v, want none (Envoy's default)", got.AsDuration())
		case d > 0 && got.AsDuration() != d:
			t.Errorf("RouteTimeout %v: route timeout %v", d, got.AsDuration())
		}
	}
}

// TestRequestTimeoutOption: RequestTimeout replaces the HCM's
// request_timeout (60 s) when set, and 0 keeps it.
func TestRequestTimeoutOption(t *testing.T) {
	for _, d := range []time.Duration{0, 10 * time.Minute} {
		c := testConfig(t, Coraza)
		c.RequestTimeout = d
		b, err := bootstrap(c)
		if err != nil {
			t.Fatal(err)
		}
		got := hcmOf(t, b).GetRequestTimeout().AsDuration()
		want := d
		if d == 0 {
			want = requestTimeout
		}
		if got != want {
			t.Errorf("RequestTimeout %v: request_timeout %v, want %v", d, got, want)
		}
	}
}

// TestStreamIdleTimeoutOption: StreamIdleTimeout replaces the HCM's
// stream_idle_timeout (30 s) when set, and 0 keeps it.
func TestStreamIdleTimeoutOption(t *testing.T) {
	for _, d := range []time.Duration{0, 10 * time.Minute} {
		c := testConfig(t, Coraza)
		c.StreamIdleTimeout = d
		b, err := bootstrap(c)
		if err != nil {
			t.Fatal(err)
		}
		got := hcmOf(t, b).GetStreamIdleTimeout().AsDuration()
		want := d
		if d == 0 {
			want = streamIdleTimeout
		}
		if got != want {
			t.Errorf("StreamIdleTimeout %v: stream_idle_timeout %v, want %v", d, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	rules, dir := fakeWAF(t)
	tests := []struct {
		name    string
		c       Config
		wantErr string
	}{
		{"passthrough", Config{Mode: Passthrough, UpstreamAddr: "127.0.0.1:1"}, ""},
		{"coraza", Config{Mode: Coraza, UpstreamAddr: "[::1]:80", RulesFile: rules, ModuleSearchPath: dir}, ""},
		{"bad mode", Config{Mode: "x", UpstreamAddr: "127.0.0.1:1"}, "unknown mode"},
		{"no port", Config{Mode: Passthrough, UpstreamAddr: "127.0.0.1"}, "upstream address"},
		{"hostname", Config{Mode: Passthrough, UpstreamAddr: "localhost:80"}, "IP literal"},
		{"port 0", Config{Mode: Passthrough, UpstreamAddr: "127.0.0.1:0"}, "port must be"},
		{"no rules", Config{Mode: ModSecurity, UpstreamAddr: "127.0.0.1:1", ModuleSearchPath: dir}, "rules file not set"},
		{"missing rules", Config{Mode: ModSecurity, UpstreamAddr: "127.0.0.1:1", RulesFile: rules + ".no", ModuleSearchPath: dir}, "rules file"},
		{"no module dir", Config{Mode: Coraza, UpstreamAddr: "127.0.0.1:1", RulesFile: rules}, "module search path not set"},
		{"missing module", Config{Mode: Coraza, UpstreamAddr: "127.0.0.1:1", RulesFile: rules, ModuleSearchPath: t.TempDir()}, "make modules"},
		{"negative body", Config{Mode: Passthrough, UpstreamAddr: "127.0.0.1:1", MaxBodyBytes: -1}, "max body bytes"},
		{"negative route timeout", Config{Mode: Passthrough, UpstreamAddr: "127.0.0.1:1", RouteTimeout: -time.Second}, "route timeout"},
		{"negative request timeout", Config{Mode: Passthrough, UpstreamAddr: "127.0.0.1:1", RequestTimeout: -time.Second}, "request timeout"},
		{"negative stream idle timeout", Config{Mode: Passthrough, UpstreamAddr: "127.0.0.1:1", StreamIdleTimeout: -time.Second}, "stream idle timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestEnv(t *testing.T) {
	tests := []struct {
		mode Mode
		want []string
	}{
		{Passthrough, nil},
		{ModSecurity, []string{"ENVOY_DYNAMIC_MODULES_SEARCH_PATH=/opt/mods"}},
		{Coraza, []string{"ENVOY_DYNAMIC_MODULES_SEARCH_PATH=/opt/mods"}},
	}
	for _, tt := range tests {
		got := Env(Config{Mode: tt.mode, ModuleSearchPath: "/opt/mods"})
		if !slices.Equal(got, tt.want) {
			t.Errorf("Env(%s) = %q, want %q", tt.mode, got, tt.want)
		}
	}
}

// TestMeter: with MeterDir, Envoy loads the callgrind meter from it in the
// module's place and the meter is told the module's absolute path.
func TestMeter(t *testing.T) {
	got := Env(Config{Mode: Coraza, ModuleSearchPath: "/opt/mods", MeterDir: "/opt/meter"})
	want := []string{"ENVOY_DYNAMIC_MODULES_SEARCH_PATH=/opt/meter", "WAFBENCH_METER_TARGET=/opt/mods/libwafbench_coraza.so"}
	if !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
	if n := (Config{Mode: ModSecurity, MeterDir: "/opt/meter"}).moduleName(); n != "wafbench_meter" {
		t.Errorf("module name with a meter = %q, want wafbench_meter", n)
	}
	c := testConfig(t, CorazaWasm)
	c.MeterDir = t.TempDir()
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "native modules only") {
		t.Errorf("coraza-wasm with a meter: Validate = %v, want a refusal", err)
	}
}

func TestWriteYAML(t *testing.T) {
	for _, m := range Modes {
		t.Run(string(m), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "envoy.yaml")
			if err := WriteYAML(testConfig(t, m), path); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(b, &doc); err != nil {
				t.Fatalf("written YAML does not parse: %v", err)
			}
			s := string(b)
			for _, want := range []string{"generate_request_id: false", "max_request_headers_kb: 60", "port_value: 0"} {
				if !strings.Contains(s, want) {
					t.Errorf("YAML lacks %q", want)
				}
			}
			module := m.IsWAF() && m != CorazaWasm && !m.IsExternal()
			if got := strings.Contains(s, "DynamicModuleFilter"); got != module {
				t.Errorf("YAML mentions DynamicModuleFilter: %v, want %v", got, module)
			}
		})
	}
}
