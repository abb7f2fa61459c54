package main

import (
	"errors"
	"net"
	"slices"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"wafbench/filters/extproc/waf"
)

// The ext_proc attributes the server reads when Envoy sends them (the
// filter's request_attributes), as the modules read Envoy's attributes.
const (
	attrSource      = "source.address"
	attrDestination = "destination.address"
	attrProtocol    = "request.protocol"
)

// headerList is a header map as (name, value) pairs in Envoy's order; a
// value travels in raw_value (Envoy's default) or value.
func headerList(m *corev3.HeaderMap) [][2]string {
	if m == nil {
		return nil
	}
	out := make([][2]string, 0, len(m.Headers))
	for _, h := range m.Headers {
		v := h.Value
		if len(h.RawValue) > 0 {
			v = string(h.RawValue)
		}
		out = append(out, [2]string{h.Key, v})
	}
	return out
}

// extprocRequest is the waf.Request of an ext_proc request-headers message
// and the attributes that came with it.
func extprocRequest(h *extprocv3.HttpHeaders, attrs map[string]*structpb.Struct) waf.Request {
	req := waf.Request{Headers: headerList(h.GetHeaders())}
	// Attributes come keyed by the filter's name (usually
	// envoy.filters.http.ext_proc): read them whatever it is.
	for _, s := range attrs {
		f := s.GetFields()
		if v := f[attrSource].GetStringValue(); v != "" {
			req.Client = v
		}
		if v := f[attrDestination].GetStringValue(); v != "" {
			req.Server = v
		}
		if v := f[attrProtocol].GetStringValue(); v != "" {
			req.Proto = v
		}
	}
	return req
}

// responseStatus splits response headers into the :status value (0 when
// missing or not a number) and the headers without pseudo-headers.
func responseStatus(hs [][2]string) (int, [][2]string) {
	status := 0
	out := make([][2]string, 0, len(hs))
	for _, h := range hs {
		if h[0] == ":status" {
			status, _ = strconv.Atoi(h[1])
			continue
		}
		if len(h[0]) > 0 && h[0][0] == ':' {
			continue
		}
		out = append(out, h)
	}
	return status, out
}

// replyHeaders are the headers of every reply (the modules' local reply
// sets only its content type).
func replyHeaders() []*corev3.HeaderValueOption {
	return []*corev3.HeaderValueOption{{
		Header: &corev3.HeaderValue{Key: "content-type", RawValue: []byte(waf.ReplyContentType)},
	}}
}

// immediate is the ext_proc answer that sends r instead of the request.
func immediate(r *waf.Reply) *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ImmediateResponse{
		ImmediateResponse: &extprocv3.ImmediateResponse{
			Status:  &typev3.HttpStatus{Code: typev3.StatusCode(r.Status)},
			Headers: &extprocv3.HeaderMutation{SetHeaders: replyHeaders()},
			Body:    []byte(r.Body),
			Details: r.Details,
		},
	}}
}

// continueRequestHeaders lets the request headers go on unchanged (held by
// Envoy until the buffered body is answered too).
func continueRequestHeaders() *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestHeaders{
		RequestHeaders: &extprocv3.HeadersResponse{},
	}}
}

func continueRequestBody() *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestBody{
		RequestBody: &extprocv3.BodyResponse{},
	}}
}

func continueResponseHeaders() *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseHeaders{
		ResponseHeaders: &extprocv3.HeadersResponse{},
	}}
}

// authzRequest is the waf.Request and the body of an ext_authz check. The
// headers come from header_map when Envoy sends it (encode_raw_headers),
// else from the headers map, sorted by name (a map has no order); the
// request line's parts the map lacks are added as pseudo-headers.
func authzRequest(req *authv3.CheckRequest) (waf.Request, []byte) {
	a := req.GetAttributes()
	h := a.GetRequest().GetHttp()
	var hs [][2]string
	if h.GetHeaderMap() != nil {
		hs = headerList(h.GetHeaderMap())
	} else {
		for k, v := range h.GetHeaders() {
			hs = append(hs, [2]string{k, v})
		}
		slices.SortFunc(hs, func(x, y [2]string) int {
			// Pseudo-headers first, as Envoy presents them.
			if px, py := x[0][0] == ':', y[0][0] == ':'; px != py {
				if px {
					return -1
				}
				return 1
			}
			switch {
			case x[0] < y[0]:
				return -1
			case x[0] > y[0]:
				return 1
			}
			return 0
		})
	}
	has := map[string]bool{}
	for _, kv := range hs {
		has[kv[0]] = true
	}
	var pseudo [][2]string
	for _, p := range [][2]string{{":method", h.GetMethod()}, {":path", h.GetPath()}, {":authority", h.GetHost()}} {
		if !has[p[0]] && p[1] != "" {
			pseudo = append(pseudo, p)
		}
	}
	r := waf.Request{
		Headers: append(pseudo, hs...),
		Client:  socketAddr(a.GetSource().GetAddress()),
		Server:  socketAddr(a.GetDestination().GetAddress()),
		Proto:   h.GetProtocol(),
	}
	body := h.GetRawBody()
	if len(body) == 0 && h.GetBody() != "" {
		body = []byte(h.GetBody())
	}
	return r, body
}

// socketAddr is "ip:port" of a socket address, "" for any other address.
func socketAddr(a *corev3.Address) string {
	sa := a.GetSocketAddress()
	if sa == nil || sa.GetAddress() == "" {
		return ""
	}
	return net.JoinHostPort(sa.GetAddress(), strconv.Itoa(int(sa.GetPortValue())))
}

// denied is the ext_authz answer that sends r instead of the request.
func denied(r *waf.Reply) *authv3.CheckResponse {
	return &authv3.CheckResponse{
		Status: &rpcstatus.Status{Code: int32(code.Code_PERMISSION_DENIED), Message: r.Details},
		HttpResponse: &authv3.CheckResponse_DeniedResponse{DeniedResponse: &authv3.DeniedHttpResponse{
			Status:  &typev3.HttpStatus{Code: typev3.StatusCode(r.Status)},
			Headers: replyHeaders(),
			Body:    r.Body,
		}},
	}
}

// allowed is the ext_authz answer that lets the request go on unchanged.
func allowed() *authv3.CheckResponse {
	return &authv3.CheckResponse{
		Status:       &rpcstatus.Status{Code: int32(code.Code_OK)},
		HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: &authv3.OkHttpResponse{}},
	}
}

// errBodyNotBuffered is the stream error for a request body that comes in
// parts: the server inspects whole bodies only (request_body_mode BUFFERED).
var errBodyNotBuffered = errors.New("request body came in parts: set processing_mode.request_body_mode BUFFERED")
