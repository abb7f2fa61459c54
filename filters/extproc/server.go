package main

import (
	"context"
	"errors"
	"io"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"wafbench/filters/extproc/waf"
)

// server serves ext_proc and ext_authz over one engine.
type server struct {
	extprocv3.UnimplementedExternalProcessorServer
	authv3.UnimplementedAuthorizationServer
	eng waf.Engine
}

// Process implements ext_proc: one gRPC stream is one HTTP request and one
// engine transaction. Request headers run phase 1 (and phase 2 when the
// request has no body), the buffered request body phase 2, the response
// headers phases 3 and 4 (when the configuration inspects responses). A
// reply of the engine becomes an ImmediateResponse.
func (s *server) Process(ps extprocv3.ExternalProcessor_ProcessServer) error {
	st := s.eng.NewStream()
	defer st.Close()
	for {
		req, err := ps.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		resp, err := process(st, req)
		if err != nil {
			return err
		}
		if err := ps.Send(resp); err != nil {
			return err
		}
	}
}

// process answers one ext_proc message of the stream's request.
func process(st waf.Stream, req *extprocv3.ProcessingRequest) (*extprocv3.ProcessingResponse, error) {
	switch r := req.Request.(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		h := r.RequestHeaders
		if rep := st.RequestHeaders(extprocRequest(h, req.Attributes), h.GetEndOfStream()); rep != nil {
			return immediate(rep), nil
		}
		return continueRequestHeaders(), nil
	case *extprocv3.ProcessingRequest_RequestBody:
		b := r.RequestBody
		if !b.GetEndOfStream() {
			return nil, status.Error(codes.FailedPrecondition, errBodyNotBuffered.Error())
		}
		if rep := st.RequestBody(b.GetBody()); rep != nil {
			return immediate(rep), nil
		}
		return continueRequestBody(), nil
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		code, hs := responseStatus(headerList(r.ResponseHeaders.GetHeaders()))
		if rep := st.ResponseHeaders(code, hs); rep != nil {
			return immediate(rep), nil
		}
		return continueResponseHeaders(), nil
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestTrailers{
			RequestTrailers: &extprocv3.TrailersResponse{},
		}}, nil
	case *extprocv3.ProcessingRequest_ResponseBody:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseBody{
			ResponseBody: &extprocv3.BodyResponse{},
		}}, nil
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseTrailers{
			ResponseTrailers: &extprocv3.TrailersResponse{},
		}}, nil
	}
	return nil, status.Errorf(codes.InvalidArgument, "ext_proc message %T not handled", req.Request)
}

// Check implements ext_authz: one call is one request and one engine
// transaction through phases 1 and 2 (the body as Envoy sent it,
// with_request_body) and 5.
func (s *server) Check(_ context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	st := s.eng.NewStream()
	defer st.Close()
	r, body := authzRequest(req)
	rep := st.RequestHeaders(r, len(body) == 0)
	if rep == nil && len(body) > 0 {
		rep = st.RequestBody(body)
	}
	if rep != nil {
		return denied(rep), nil
	}
	return allowed(), nil
}
