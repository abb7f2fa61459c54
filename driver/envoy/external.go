package envoy

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	extauthz "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Sidecar says, for the external modes (ExtProc, ExtAuthz), where the
// wafbench-extproc server listens and what Envoy does when it fails.
type Sidecar struct {
	// Listen is the server's --listen address: "unix:PATH" (a Unix socket,
	// the default transport) or "tcp:127.0.0.1:PORT" (loopback TCP).
	Listen string
	// FailureModeAllow lets a request through uninspected when the server
	// cannot be reached or errs (the filters' failure_mode_allow); false,
	// the benchmark default, fails closed.
	FailureModeAllow bool
}

// Transport names how Envoy reaches the server.
type Transport string

// The transports.
const (
	UDS Transport = "uds" // a Unix domain socket (Envoy's pipe address)
	TCP Transport = "tcp" // loopback TCP
)

// Transports lists the transports, the default first.
var Transports = []Transport{UDS, TCP}

// ParseTransport returns the Transport named s ("" is UDS).
func ParseTransport(s string) (Transport, error) {
	if s == "" {
		return UDS, nil
	}
	for _, t := range Transports {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("transport %q: want uds or tcp", s)
}

// ListenAddr is the server's --listen value for this transport: at
// socketPath for UDS, at the loopback address tcpAddr (host:port) for TCP.
func (t Transport) ListenAddr(socketPath, tcpAddr string) string {
	if t == TCP {
		return "tcp:" + tcpAddr
	}
	return "unix:" + socketPath
}

// sidecarCluster names the cluster of the wafbench-extproc server.
const sidecarCluster = "wafbench_extproc"

// externalTimeout bounds Envoy's wait for one answer of the server
// (ext_proc's message_timeout, ext_authz's gRPC timeout): far above one
// request's evaluation, so that it never decides a benchmark request. The
// slowest evaluation measured natively is an adversarial input costing
// 1.7-2.4 s of CPU; ext_authz's own default is 200 ms.
const externalTimeout = 30 * time.Second

// maxUnixPath is the longest path a Unix socket address holds (sun_path
// less its terminating NUL).
const maxUnixPath = 107

// sidecarAddress parses a --listen value into the Envoy address of the
// server.
func sidecarAddress(listen string) (*core.Address, error) {
	kind, rest, _ := strings.Cut(listen, ":")
	switch kind {
	case "unix":
		if !filepath.IsAbs(rest) {
			return nil, fmt.Errorf("sidecar listen %q: want an absolute socket path", listen)
		}
		if len(rest) > maxUnixPath {
			return nil, fmt.Errorf("sidecar listen %q: socket path longer than %d bytes", listen, maxUnixPath)
		}
		return &core.Address{Address: &core.Address_Pipe{Pipe: &core.Pipe{Path: rest}}}, nil
	case "tcp":
		ap, err := netip.ParseAddrPort(rest)
		if err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 {
			return nil, fmt.Errorf("sidecar listen %q: want tcp:<loopback IP>:<port>", listen)
		}
		return &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
			Address:       ap.Addr().String(),
			PortSpecifier: &core.SocketAddress_PortValue{PortValue: uint32(ap.Port())},
		}}}, nil
	}
	return nil, fmt.Errorf("sidecar listen %q: want unix:PATH or tcp:127.0.0.1:PORT", listen)
}

// SidecarConfig is the configuration file of the wafbench-extproc server
// in c's mode (its --config): exactly the filter_config the engine's
// dynamic module receives in Envoy.
func SidecarConfig(c Config) ([]byte, error) {
	rules := c.RulesFile
	if abs, err := filepath.Abs(rules); err == nil {
		rules = abs
	}
	return json.Marshal(moduleFilterConfig{
		RulesFile:       rules,
		InspectResponse: c.InspectResponse,
		MaxBodyBytes:    c.MaxBodyBytes,
		MatchLog:        c.MatchLog,
	})
}

// bodyLimit is the request body limit the engine applies, which the
// external filters apply too: c.MaxBodyBytes, or the engine's default.
func (c Config) bodyLimit() int {
	if c.MaxBodyBytes > 0 {
		return c.MaxBodyBytes
	}
	return 1 << 20 // the engine's default (engine.DefaultMaxBodyBytes)
}

// makeSidecarCluster is the static HTTP/2 cluster of the server at its
// Unix socket or loopback port.
func makeSidecarCluster(s *Sidecar) (*cluster.Cluster, error) {
	addr, err := sidecarAddress(s.Listen)
	if err != nil {
		return nil, err
	}
	return staticCluster(sidecarCluster, &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig{
		ProtocolConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
			Http2ProtocolOptions: &core.Http2ProtocolOptions{},
		},
	}, &endpoint.ClusterLoadAssignment{
		ClusterName: sidecarCluster,
		Endpoints: []*endpoint.LocalityLbEndpoints{{
			LbEndpoints: []*endpoint.LbEndpoint{{
				HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{Address: addr}},
			}},
		}},
	})
}

// sidecarGrpc is the gRPC service both filters call: Envoy's own gRPC
// client on the server's cluster.
func sidecarGrpc() *core.GrpcService {
	return &core.GrpcService{
		TargetSpecifier: &core.GrpcService_EnvoyGrpc_{EnvoyGrpc: &core.GrpcService_EnvoyGrpc{ClusterName: sidecarCluster}},
		Timeout:         durationpb.New(externalTimeout),
	}
}

// makeExtProcFilter is envoy.filters.http.ext_proc calling the server:
// the request headers and the whole request body (BUFFERED: the modules,
// too, hold the body to its end before phase 2) go to the server; the
// response headers too when the engine inspects responses (crs-test), as
// the module then runs phase 3 on them; the response body and trailers
// never.
//
// Response headers are skipped otherwise: the module does nothing with
// them in a measured trial, so a message to the server would be cost the
// module does not pay; and with them sent, Envoy's own local replies to a
// request its codec rejects (400, 426) are lost (the connection closes
// with no response; envoyproxy/envoy#29440).
func makeExtProcFilter(c Config) (*hcm.HttpFilter, error) {
	responseHeaders := extproc.ProcessingMode_SKIP
	if c.InspectResponse {
		responseHeaders = extproc.ProcessingMode_SEND
	}
	f, err := anypb.New(&extproc.ExternalProcessor{
		GrpcService:      sidecarGrpc(),
		FailureModeAllow: c.Sidecar.FailureModeAllow,
		ProcessingMode: &extproc.ProcessingMode{
			RequestHeaderMode:   extproc.ProcessingMode_SEND,
			ResponseHeaderMode:  responseHeaders,
			RequestBodyMode:     extproc.ProcessingMode_BUFFERED,
			ResponseBodyMode:    extproc.ProcessingMode_NONE,
			RequestTrailerMode:  extproc.ProcessingMode_SKIP,
			ResponseTrailerMode: extproc.ProcessingMode_SKIP,
		},
		MessageTimeout: durationpb.New(externalTimeout),
	})
	if err != nil {
		return nil, err
	}
	return &hcm.HttpFilter{Name: extProcFilterName, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: f}}, nil
}

// makeExtAuthzFilter is envoy.filters.http.ext_authz calling the server
// once per request with its headers and whole body (up to the engine's
// body limit; a longer body is answered 413 by Envoy, as the module
// answers it). A failed call answers 503, not ext_authz's default 403, so
// that a dead server is never taken for a WAF denial.
func makeExtAuthzFilter(c Config) (*hcm.HttpFilter, error) {
	f, err := anypb.New(&extauthz.ExtAuthz{
		Services:            &extauthz.ExtAuthz_GrpcService{GrpcService: sidecarGrpc()},
		TransportApiVersion: core.ApiVersion_V3,
		FailureModeAllow:    c.Sidecar.FailureModeAllow,
		WithRequestBody: &extauthz.BufferSettings{
			MaxRequestBytes:     uint32(c.bodyLimit()),
			AllowPartialMessage: false,
			PackAsBytes:         true, // raw bytes in raw_body: a body need not be UTF-8
		},
		StatusOnError: &typev3.HttpStatus{Code: typev3.StatusCode_ServiceUnavailable},
	})
	if err != nil {
		return nil, err
	}
	return &hcm.HttpFilter{Name: extAuthzFilterName, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: f}}, nil
}

// The HTTP filter names of the external filters.
const (
	extProcFilterName  = "envoy.filters.http.ext_proc"
	extAuthzFilterName = "envoy.filters.http.ext_authz"
)

// externalBodyBufferLimit is the virtual host's request_body_buffer_limit
// in the ext_proc mode: the engine's body limit, so that Envoy's buffer,
// which holds the whole body for the server, overflows (413) exactly where
// the module's limit would answer 413. nil in the other modes.
func externalBodyBufferLimit(c Config) *wrapperspb.UInt64Value {
	if c.Mode != ExtProc {
		return nil
	}
	return wrapperspb.UInt64(uint64(c.bodyLimit()))
}
