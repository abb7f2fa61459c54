// Package envoy builds the Envoy bootstrap wafbench runs (from typed
// go-control-plane protos, written as YAML), finds and identifies the Envoy
// binary, and starts, watches and stops Envoy processes.
//
// One Config yields one static bootstrap: a loopback listener on a
// kernel-chosen port (plain, or terminating TLS with the run's certificate),
// an HTTP connection manager with the router (and, in the WAF modes, the
// mode's filter in front of it: a wafbench dynamic module, the Coraza
// proxy-wasm filter, or ext_proc / ext_authz calling the wafbench-extproc
// server on a cluster of its own), and one static cluster "upstream". Every mode gets the same listener for a given downstream
// protocol.
package envoy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	accesslog "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	stream "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	dynmod "github.com/envoyproxy/go-control-plane/envoy/extensions/dynamic_modules/v3"
	dynmodfilter "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/dynamic_modules/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"sigs.k8s.io/yaml"

	"wafbench/driver/callgrind"
	"wafbench/driver/downstream"
	"wafbench/driver/modes"
	"wafbench/internal/atomicfile"
)

// Mode selects what runs inside Envoy's HTTP filter chain: nothing but the
// router, one engine's module, or a filter calling the wafbench-extproc
// server. Every build of an engine is the same Mode here; only the module
// search path differs (driver/modes names builds).
type Mode string

// The kinds of filter chain: the first four named as driver/modes names
// them, the external ones by their Envoy filter (either engine's server).
const (
	Passthrough Mode = modes.Passthrough // router only
	ModSecurity Mode = modes.ModSecurity // C++ dynamic module wrapping libmodsecurity
	Coraza      Mode = modes.Coraza      // Go c-shared dynamic module wrapping coraza/v3
	CorazaWasm  Mode = modes.CorazaWasm  // proxy-wasm filter (Go, wasip1) wrapping coraza/v3 in V8
	ExtProc     Mode = "ext_proc"        // envoy.filters.http.ext_proc calling the wafbench-extproc server
	ExtAuthz    Mode = "ext_authz"       // envoy.filters.http.ext_authz calling the wafbench-extproc server
)

// Modes lists every mode in a fixed order.
var Modes = []Mode{Passthrough, ModSecurity, Coraza, CorazaWasm, ExtProc, ExtAuthz}

// parseMode returns the Mode named s.
func parseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q (want passthrough, modsecurity, coraza, coraza-wasm, ext_proc, ext_authz)", s)
}

// IsWAF reports whether m puts a WAF in the filter chain: a module, or a
// filter calling the WAF server.
func (m Mode) IsWAF() bool { return m != Passthrough }

// IsExternal reports whether m calls the wafbench-extproc server.
func (m Mode) IsExternal() bool { return m == ExtProc || m == ExtAuthz }

// moduleName is the dynamic_module_config name of m's module ("" for
// passthrough and the external modes). Envoy loads lib<name>.so from
// ENVOY_DYNAMIC_MODULES_SEARCH_PATH.
func (m Mode) moduleName() string {
	if !m.IsWAF() || m.IsExternal() {
		return ""
	}
	return "wafbench_" + string(m)
}

// moduleName is the module Envoy loads: the meter when c has one.
func (c Config) moduleName() string {
	if c.MeterDir != "" {
		return callgrind.MeterModule
	}
	return c.Mode.moduleName()
}

// ModuleFile is the file name of m's module, e.g. libwafbench_coraza.so.
func (m Mode) ModuleFile() string {
	if m == CorazaWasm {
		return filepath.Base(modes.WasmFile(""))
	}
	if !m.IsWAF() || m.IsExternal() {
		return ""
	}
	return "lib" + m.moduleName() + ".so"
}

// StatPrefix is the HTTP connection manager's stat prefix: its counters
// are http.<StatPrefix>.*.
const StatPrefix = "ingress"

// Names and limits fixed by the generated bootstrap.
const (
	listenerName    = "wafbench"
	upstreamCluster = "upstream"
	filterName      = "wafbench" // filter_name passed to the module
	// DynamicModuleFilterName is the HTTP filter name of the module filter.
	dynamicModuleFilterName = "envoy.filters.http.dynamic_modules"

	// BlockHeader and BlockValue mark a request every mode must answer with
	// 403: the WAF rules deny it in phase 1, passthrough by a direct_response
	// route.
	BlockHeader = "X-WAF-Benchmark"
	BlockValue  = "phase1-block"

	// MaxRequestHeadersKB is the HCM max_request_headers_kb we set
	// explicitly. It equals Envoy 1.40's default, so behaviour is unchanged;
	// it is spelled out so results can record it.
	maxRequestHeadersKB = 60
	// CircuitBreakerMax is the default-priority max_connections,
	// max_pending_requests and max_requests of the upstream cluster, far
	// above any client connection count we run (1024).
	circuitBreakerMax = 100000
	// connectTimeout is the upstream cluster's connect timeout.
	connectTimeout = 10 * time.Second
)

// ClientTimeout is one of the HCM's timeouts on a slow client, set
// explicitly in every bootstrap: its field name, its value, and the
// counter of http.ingress that counts the requests it ended.
type ClientTimeout struct {
	Name    string
	After   time.Duration
	Counter string
}

// ClientTimeouts are the HCM's timeouts on slow clients, far above any
// benchmark request (the slowest, coraza-wasm with a 64 KiB body on a busy
// machine, takes seconds) and short enough for the slow-client suite to see
// each one end a request: request_headers_timeout from the head's first
// byte to its last (Envoy's default: none), stream_idle_timeout with
// nothing received or sent on a stream (default 5 min), request_timeout
// from the head's first byte until the whole request has passed the
// filters (default: none). Each answers 408 when no response has started.
var ClientTimeouts = []ClientTimeout{
	{"request_headers_timeout", requestHeadersTimeout, "http." + StatPrefix + ".downstream_rq_header_timeout"},
	{"stream_idle_timeout", streamIdleTimeout, "http." + StatPrefix + ".downstream_rq_idle_timeout"},
	{"request_timeout", requestTimeout, "http." + StatPrefix + ".downstream_rq_timeout"},
}

const (
	requestHeadersTimeout = 10 * time.Second
	streamIdleTimeout     = 30 * time.Second
	requestTimeout        = 60 * time.Second
)

// Config describes one Envoy bootstrap. The zero values of InspectResponse,
// MaxBodyBytes and AccessLog are the benchmark defaults.
type Config struct {
	Mode             Mode
	UpstreamAddr     string      // host:port of the upstream, host an IP literal (STATIC cluster)
	ModuleSearchPath string      // directory holding lib<module>.so (coraza.wasm for coraza-wasm); WAF modes only
	RulesFile        string      // WAF rules entry file passed to the module; WAF modes only
	InspectResponse  bool        // ask the module to inspect responses too
	MaxBodyBytes     int         // request body limit passed to the module; 0 means the module's default
	AccessLog        bool        // add an HCM access log to stdout (off for measurements)
	MatchLog         bool        // the module logs each rule match as a wafbench-match line at info (CRS conformance runs only)
	Wasm             wasmOptions // V8 options of coraza-wasm (envoy/wasm.go)
	// RouteTimeout is the upstream route's timeout, from the request's end
	// to the response's; 0 keeps Envoy's default (15 s). Tests that send
	// coraza-wasm a 64 KiB body on a shared machine raise it: the filter's
	// time in the request body counts against it.
	RouteTimeout time.Duration
	// RequestTimeout replaces the HCM's request_timeout (ClientTimeouts)
	// when > 0. run --callgrind raises it with RouteTimeout: under valgrind
	// a 64 KiB body spends more than a minute in the filters.
	RequestTimeout time.Duration
	// StreamIdleTimeout replaces the HCM's stream_idle_timeout
	// (ClientTimeouts) when > 0. run --callgrind raises it too: a filter
	// that works on a 64 KiB body for over 30 s under valgrind, sending
	// and receiving nothing, had the stream ended with 504.
	StreamIdleTimeout time.Duration
	// Downstream is the protocol clients speak on the listener; "" (or
	// downstream.H1) is plain HTTP/1.1 with the codec chosen by AUTO, the
	// bootstrap of every run before it existed. h1-tls and h2-tls terminate
	// TLS with CertFile and KeyFile and offer one ALPN protocol; h2c is
	// HTTP/2 with prior knowledge on the plain listener. The TLS and h2c
	// listeners fix the codec, so a client speaking anything else fails.
	Downstream downstream.Protocol
	CertFile   string // PEM certificate chain served with TLS; TLS downstreams only
	KeyFile    string // PEM private key of CertFile; TLS downstreams only
	// MeterDir, when set (run --callgrind), is the directory of the
	// callgrind meter module (filters/meter): Envoy loads it in the WAF
	// module's place and it forwards every hook to the module, which Env
	// names by absolute path. Native WAF modes only.
	MeterDir string
	// NoFlushTimer (run --callgrind) flushes stats only when the admin
	// interface is asked (stats_flush_on_admin), so no 5 s flush timer fires
	// inside a counted window; nothing else changes (no stats sink is
	// configured either way).
	NoFlushTimer bool
	// Sidecar is where the wafbench-extproc server listens and how Envoy
	// treats its failure; the external modes (ExtProc, ExtAuthz) only.
	Sidecar *Sidecar
	// reference marks a reference configuration (reference.go): paths stay
	// as given, relative to the repository root, no file is required to
	// exist, and coraza-wasm's rule files are not inlined.
	reference bool
}

// Validate checks c and, for WAF modes, that the rules file and the module
// file exist.
func (c Config) Validate() error {
	if _, err := parseMode(string(c.Mode)); err != nil {
		return err
	}
	if _, err := upstreamAddrPort(c.UpstreamAddr); err != nil {
		return err
	}
	if c.MaxBodyBytes < 0 {
		return fmt.Errorf("max body bytes: want >= 0, got %d", c.MaxBodyBytes)
	}
	if c.RouteTimeout < 0 {
		return fmt.Errorf("route timeout: want >= 0, got %v", c.RouteTimeout)
	}
	if c.RequestTimeout < 0 {
		return fmt.Errorf("request timeout: want >= 0, got %v", c.RequestTimeout)
	}
	if c.StreamIdleTimeout < 0 {
		return fmt.Errorf("stream idle timeout: want >= 0, got %v", c.StreamIdleTimeout)
	}
	if _, err := downstream.Parse(string(c.Downstream)); err != nil {
		return fmt.Errorf("downstream: %w", err)
	}
	if c.Downstream.TLS() {
		for _, f := range []struct{ what, path string }{{"certificate", c.CertFile}, {"key", c.KeyFile}} {
			if f.path == "" {
				return fmt.Errorf("downstream %s: %s file not set", c.Downstream, f.what)
			}
			if _, err := os.Stat(f.path); err != nil {
				return fmt.Errorf("downstream %s: %s file: %w", c.Downstream, f.what, err)
			}
		}
	}
	if !c.Mode.IsWAF() {
		return nil
	}
	if c.Mode.IsExternal() != (c.Sidecar != nil) {
		return fmt.Errorf("mode %s: a sidecar is set for, and only for, ext_proc and ext_authz", c.Mode)
	}
	if c.RulesFile == "" {
		return fmt.Errorf("mode %s: rules file not set", c.Mode)
	}
	if c.reference {
		return nil
	}
	if _, err := os.Stat(c.RulesFile); err != nil {
		return fmt.Errorf("mode %s: rules file: %w", c.Mode, err)
	}
	if c.Mode.IsExternal() {
		if c.MeterDir != "" {
			return fmt.Errorf("mode %s: the callgrind meter wraps native modules only", c.Mode)
		}
		_, err := sidecarAddress(c.Sidecar.Listen)
		return err
	}
	if c.ModuleSearchPath == "" {
		return fmt.Errorf("mode %s: module search path not set", c.Mode)
	}
	mod := filepath.Join(c.ModuleSearchPath, c.Mode.ModuleFile())
	if _, err := os.Stat(mod); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("mode %s: module %s not found (`make modules` builds it)", c.Mode, mod)
		}
		return fmt.Errorf("mode %s: module: %w", c.Mode, err)
	}
	if c.MeterDir != "" {
		if c.Mode == CorazaWasm {
			return fmt.Errorf("mode %s: the callgrind meter wraps native modules only", c.Mode)
		}
		if _, err := os.Stat(filepath.Join(c.MeterDir, meterFile)); err != nil {
			return fmt.Errorf("mode %s: callgrind meter: %w (`make modules` builds it)", c.Mode, err)
		}
	}
	return nil
}

// meterFile is the callgrind meter module's file (filters/meter).
const meterFile = "lib" + callgrind.MeterModule + ".so"

func upstreamAddrPort(s string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("upstream address %q: %w", s, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("upstream address %q: host must be an IP literal", s)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return netip.AddrPort{}, fmt.Errorf("upstream address %q: port must be 1-65535", s)
	}
	return netip.AddrPortFrom(ip, uint16(p)), nil
}

// Env returns the environment variables Envoy needs in c's mode, as
// KEY=value: the module search path for WAF modes. The Go (coraza) module
// follows the cgo pointer rules and runs with Go's default cgo checks.
func Env(c Config) []string {
	if !c.Mode.IsWAF() || c.Mode == CorazaWasm || c.Mode.IsExternal() {
		return nil
	}
	dir := c.ModuleSearchPath
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if c.MeterDir == "" {
		return []string{"ENVOY_DYNAMIC_MODULES_SEARCH_PATH=" + dir}
	}
	meter := c.MeterDir
	if abs, err := filepath.Abs(meter); err == nil {
		meter = abs
	}
	return []string{"ENVOY_DYNAMIC_MODULES_SEARCH_PATH=" + meter,
		callgrind.MeterTargetEnv + "=" + filepath.Join(dir, c.Mode.ModuleFile())}
}

// bootstrap builds the Envoy bootstrap for c.
func bootstrap(c Config) (*bootstrapv3.Bootstrap, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	up, _ := upstreamAddrPort(c.UpstreamAddr)
	l, err := makeListener(c)
	if err != nil {
		return nil, err
	}
	cl, err := makeCluster(up)
	if err != nil {
		return nil, err
	}
	clusters := []*cluster.Cluster{cl}
	if c.Mode.IsExternal() {
		sc, err := makeSidecarCluster(c.Sidecar)
		if err != nil {
			return nil, err
		}
		clusters = append(clusters, sc)
	}
	b := &bootstrapv3.Bootstrap{
		Node:  &core.Node{Id: "wafbench", Cluster: "wafbench"},
		Admin: makeAdmin(),
		StaticResources: &bootstrapv3.Bootstrap_StaticResources{
			Listeners: []*listener.Listener{l},
			Clusters:  clusters,
		},
	}
	if c.NoFlushTimer {
		b.StatsFlush = &bootstrapv3.Bootstrap_StatsFlushOnAdmin{StatsFlushOnAdmin: true}
	}
	return b, nil
}

// WriteYAML writes the bootstrap for c to path as YAML.
func WriteYAML(c Config, path string) error {
	b, err := bootstrap(c)
	if err != nil {
		return err
	}
	y, err := marshalYAML(b)
	if err != nil {
		return err
	}
	// Temporary file and rename: a full disk leaves no empty config.
	return atomicfile.WriteFile(path, y)
}

// marshalYAML renders a bootstrap as YAML (protojson with proto field names,
// then JSON→YAML).
func marshalYAML(b *bootstrapv3.Bootstrap) ([]byte, error) {
	j, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("bootstrap to JSON: %w", err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, fmt.Errorf("bootstrap to YAML: %w", err)
	}
	return y, nil
}

func loopback(port uint32) *core.Address {
	return &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
		Address:       "127.0.0.1",
		PortSpecifier: &core.SocketAddress_PortValue{PortValue: port},
	}}}
}

// makeAdmin keeps the admin interface on loopback with a kernel-chosen port;
// Envoy writes the bound address to --admin-address-path. Without an address
// Envoy disables the admin server entirely.
func makeAdmin() *bootstrapv3.Admin {
	return &bootstrapv3.Admin{Address: loopback(0)}
}

func makeListener(c Config) (*listener.Listener, error) {
	m, err := makeHCM(c)
	if err != nil {
		return nil, err
	}
	a, err := anypb.New(m)
	if err != nil {
		return nil, err
	}
	fc := &listener.FilterChain{
		Filters: []*listener.Filter{{
			Name:       "envoy.filters.network.http_connection_manager",
			ConfigType: &listener.Filter_TypedConfig{TypedConfig: a},
		}},
	}
	if c.Downstream.TLS() {
		if fc.TransportSocket, err = makeDownstreamTLS(c); err != nil {
			return nil, err
		}
	}
	return &listener.Listener{
		Name:         listenerName,
		Address:      loopback(0),
		FilterChains: []*listener.FilterChain{fc},
	}, nil
}

// makeDownstreamTLS is the listener's TLS transport socket: the run's
// certificate and key (absolute paths: Envoy's working directory may differ
// from ours) and the one ALPN protocol of c.Downstream. TLS versions and
// cipher suites are Envoy's defaults.
func makeDownstreamTLS(c Config) (*core.TransportSocket, error) {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	ctx, err := anypb.New(&tlsv3.DownstreamTlsContext{
		CommonTlsContext: &tlsv3.CommonTlsContext{
			TlsCertificates: []*tlsv3.TlsCertificate{{
				CertificateChain: &core.DataSource{Specifier: &core.DataSource_Filename{Filename: abs(c.CertFile)}},
				PrivateKey:       &core.DataSource{Specifier: &core.DataSource_Filename{Filename: abs(c.KeyFile)}},
			}},
			AlpnProtocols: []string{c.Downstream.ALPN()},
		},
	})
	if err != nil {
		return nil, err
	}
	return &core.TransportSocket{
		Name:       "envoy.transport_sockets.tls",
		ConfigType: &core.TransportSocket_TypedConfig{TypedConfig: ctx},
	}, nil
}

// codecType is the HCM codec for a downstream protocol: AUTO for plain
// HTTP/1.1 (unchanged), fixed for the others.
func codecType(p downstream.Protocol) hcm.HttpConnectionManager_CodecType {
	switch p {
	case downstream.H1TLS:
		return hcm.HttpConnectionManager_HTTP1
	case downstream.H2TLS, downstream.H2C:
		return hcm.HttpConnectionManager_HTTP2
	}
	return hcm.HttpConnectionManager_AUTO
}

func makeHCM(c Config) (*hcm.HttpConnectionManager, error) {
	filters, err := makeHTTPFilters(c)
	if err != nil {
		return nil, err
	}
	m := &hcm.HttpConnectionManager{
		StatPrefix:            StatPrefix,
		CodecType:             codecType(c.Downstream),
		GenerateRequestId:     wrapperspb.Bool(false),
		MaxRequestHeadersKb:   wrapperspb.UInt32(maxRequestHeadersKB),
		RouteSpecifier:        &hcm.HttpConnectionManager_RouteConfig{RouteConfig: makeRoute(c)},
		HttpFilters:           filters,
		RequestHeadersTimeout: durationpb.New(requestHeadersTimeout),
		StreamIdleTimeout:     durationpb.New(streamIdleTimeout),
		RequestTimeout:        durationpb.New(requestTimeout),
	}
	if c.RequestTimeout > 0 {
		m.RequestTimeout = durationpb.New(c.RequestTimeout)
	}
	if c.StreamIdleTimeout > 0 {
		m.StreamIdleTimeout = durationpb.New(c.StreamIdleTimeout)
	}
	if c.AccessLog {
		al, err := makeAccessLog()
		if err != nil {
			return nil, err
		}
		m.AccessLog = []*accesslog.AccessLog{al}
	}
	return m, nil
}

func makeAccessLog() (*accesslog.AccessLog, error) {
	a, err := anypb.New(&stream.StdoutAccessLog{})
	if err != nil {
		return nil, err
	}
	return &accesslog.AccessLog{
		Name:       "envoy.access_loggers.stdout",
		ConfigType: &accesslog.AccessLog_TypedConfig{TypedConfig: a},
	}, nil
}

func makeRoute(c Config) *route.RouteConfiguration {
	var routes []*route.Route
	if c.Mode == Passthrough {
		routes = append(routes, &route.Route{
			Name: "phase1-block",
			Match: &route.RouteMatch{
				PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"},
				Headers: []*route.HeaderMatcher{{
					Name: BlockHeader,
					HeaderMatchSpecifier: &route.HeaderMatcher_StringMatch{StringMatch: &matcher.StringMatcher{
						MatchPattern: &matcher.StringMatcher_Exact{Exact: BlockValue},
					}},
				}},
			},
			Action: &route.Route_DirectResponse{DirectResponse: &route.DirectResponseAction{Status: 403}},
		})
	}
	action := &route.RouteAction{
		ClusterSpecifier: &route.RouteAction_Cluster{Cluster: upstreamCluster},
	}
	if c.RouteTimeout > 0 {
		action.Timeout = durationpb.New(c.RouteTimeout)
	}
	routes = append(routes, &route.Route{
		Name:   "upstream",
		Match:  &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
		Action: &route.Route_Route{Route: action},
	})
	return &route.RouteConfiguration{
		Name: "local",
		VirtualHosts: []*route.VirtualHost{{
			Name:                   "all",
			Domains:                []string{"*"},
			Routes:                 routes,
			RequestBodyBufferLimit: bodyBufferLimit(c),
		}},
	}
}

// moduleFilterConfig is the JSON the wafbench modules receive as their
// filter_config (a google.protobuf.StringValue, passed to the module
// unwrapped).
type moduleFilterConfig struct {
	RulesFile       string `json:"rules_file"`
	InspectResponse bool   `json:"inspect_response"`
	MaxBodyBytes    int    `json:"max_body_bytes"`
	// MatchLog makes the module log every rule match as one
	// `wafbench-match [id "…"] [msg "…"] [data "…"] [tx "…"]` line at info
	// (filters/modsecurity/README.md, "match_log"); omitted when false.
	MatchLog bool `json:"match_log,omitempty"`
}

func makeHTTPFilters(c Config) ([]*hcm.HttpFilter, error) {
	var out []*hcm.HttpFilter
	if c.Mode.IsWAF() {
		f, err := makeWAFFilter(c)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	r, err := anypb.New(&router.Router{})
	if err != nil {
		return nil, err
	}
	out = append(out, &hcm.HttpFilter{
		Name:       "envoy.filters.http.router",
		ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: r},
	})
	return out, nil
}

func makeWAFFilter(c Config) (*hcm.HttpFilter, error) {
	rules := c.RulesFile
	if abs, err := filepath.Abs(rules); err == nil && !c.reference {
		rules = abs // Envoy's working directory may differ from ours
	}
	switch c.Mode {
	case CorazaWasm:
		return makeWasmFilter(c, rules)
	case ExtProc:
		return makeExtProcFilter(c)
	case ExtAuthz:
		return makeExtAuthzFilter(c)
	}
	js, err := json.Marshal(moduleFilterConfig{
		RulesFile:       rules,
		InspectResponse: c.InspectResponse,
		MaxBodyBytes:    c.MaxBodyBytes,
		MatchLog:        c.MatchLog,
	})
	if err != nil {
		return nil, err
	}
	fc, err := anypb.New(wrapperspb.String(string(js)))
	if err != nil {
		return nil, err
	}
	f, err := anypb.New(&dynmodfilter.DynamicModuleFilter{
		DynamicModuleConfig: &dynmod.DynamicModuleConfig{
			Name:       c.moduleName(),
			DoNotClose: true, // required for the Go module, harmless for C++
		},
		FilterName:   filterName,
		FilterConfig: fc,
	})
	if err != nil {
		return nil, err
	}
	return &hcm.HttpFilter{
		Name:       dynamicModuleFilterName,
		ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: f},
	}, nil
}

func makeCluster(up netip.AddrPort) (*cluster.Cluster, error) {
	return staticCluster(upstreamCluster, &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig{
		ProtocolConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{
			HttpProtocolOptions: &core.Http1ProtocolOptions{},
		},
	}, makeEndpoint(up))
}

// staticCluster is a static, round-robin cluster that speaks the protocol
// of explicit to its endpoints, with the harness's connect timeout and circuit breakers high
// enough never to trip: the upstream's (HTTP/1.1) and the ext_proc server's
// (HTTP/2).
func staticCluster(name string, explicit *upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig, la *endpoint.ClusterLoadAssignment) (*cluster.Cluster, error) {
	po, err := anypb.New(&upstreamhttp.HttpProtocolOptions{
		UpstreamProtocolOptions: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: explicit},
	})
	if err != nil {
		return nil, err
	}
	max := wrapperspb.UInt32(circuitBreakerMax)
	return &cluster.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(connectTimeout),
		LbPolicy:             cluster.Cluster_ROUND_ROBIN,
		CircuitBreakers: &cluster.CircuitBreakers{Thresholds: []*cluster.CircuitBreakers_Thresholds{{
			Priority:           core.RoutingPriority_DEFAULT,
			MaxConnections:     max,
			MaxPendingRequests: proto.Clone(max).(*wrapperspb.UInt32Value),
			MaxRequests:        proto.Clone(max).(*wrapperspb.UInt32Value),
		}}},
		TypedExtensionProtocolOptions: map[string]*anypb.Any{
			"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": po,
		},
		LoadAssignment: la,
	}, nil
}

func makeEndpoint(up netip.AddrPort) *endpoint.ClusterLoadAssignment {
	return &endpoint.ClusterLoadAssignment{
		ClusterName: upstreamCluster,
		Endpoints: []*endpoint.LocalityLbEndpoints{{
			LbEndpoints: []*endpoint.LbEndpoint{{
				HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{
					Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
						Address:       up.Addr().String(),
						PortSpecifier: &core.SocketAddress_PortValue{PortValue: uint32(up.Port())},
					}}},
				}},
			}},
		}},
	}
}

// bodyBufferLimit is the virtual host's request_body_buffer_limit: the
// coraza-wasm mode's (wasmBodyBufferLimit) or the ext_proc mode's
// (externalBodyBufferLimit); nil (the connection limit) in the others.
func bodyBufferLimit(c Config) *wrapperspb.UInt64Value {
	if l := wasmBodyBufferLimit(c); l != nil {
		return l
	}
	return externalBodyBufferLimit(c)
}
