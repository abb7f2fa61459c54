package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/protobuf/types/known/structpb"

	"wafbench/filters/extproc/waf"
)

// The message mapping, on the real Coraza engine (pure Go) with a small
// rule set: a phase-1 deny on a header and a phase-2 deny on an argument.
const testRules = `SecRuleEngine On
SecRequestBodyAccess On
SecRule REQUEST_HEADERS:X-Block "@streq yes" "id:1,phase:1,deny,status:403,log"
SecRule ARGS "@contains attack" "id:2,phase:2,deny,status:403,log"
SecRule REQUEST_METHOD "@streq DELETE" "id:3,phase:2,deny,status:405,log"
`

func testEngine(t *testing.T) waf.Engine {
	t.Helper()
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.conf")
	if err := os.WriteFile(rules, []byte(testRules), 0o644); err != nil {
		t.Fatal(err)
	}
	eng, err := waf.Open("coraza", []byte(fmt.Sprintf(`{"rules_file":%q,"max_body_bytes":64}`, rules)), "coraza")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return eng
}

func hmap(kv ...string) *corev3.HeaderMap {
	m := &corev3.HeaderMap{}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Headers = append(m.Headers, &corev3.HeaderValue{Key: kv[i], RawValue: []byte(kv[i+1])})
	}
	return m
}

func reqHeaders(eos bool, kv ...string) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extprocv3.HttpHeaders{Headers: hmap(kv...), EndOfStream: eos},
	}}
}

func reqBody(body string, eos bool) *extprocv3.ProcessingRequest {
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{
		RequestBody: &extprocv3.HttpBody{Body: []byte(body), EndOfStream: eos},
	}}
}

// kind names a ProcessingResponse: "headers", "body", "response_headers"
// or "immediate <status>".
func kind(r *extprocv3.ProcessingResponse) string {
	switch x := r.Response.(type) {
	case *extprocv3.ProcessingResponse_RequestHeaders:
		return "headers"
	case *extprocv3.ProcessingResponse_RequestBody:
		return "body"
	case *extprocv3.ProcessingResponse_ResponseHeaders:
		return "response_headers"
	case *extprocv3.ProcessingResponse_ImmediateResponse:
		return fmt.Sprintf("immediate %d", x.ImmediateResponse.GetStatus().GetCode())
	}
	return fmt.Sprintf("%T", r.Response)
}

func TestProcess(t *testing.T) {
	eng := testEngine(t)
	get := []string{":method", "GET", ":path", "/", ":authority", "example.test", "user-agent", "t"}
	post := []string{":method", "POST", ":path", "/form", ":authority", "example.test",
		"content-type", "application/x-www-form-urlencoded"}
	tests := []struct {
		name string
		msgs []*extprocv3.ProcessingRequest
		want []string
	}{
		{"GET passes", []*extprocv3.ProcessingRequest{reqHeaders(true, get...)}, []string{"headers"}},
		{"phase-1 deny", []*extprocv3.ProcessingRequest{reqHeaders(true, append(get, "x-block", "yes")...)},
			[]string{"immediate 403"}},
		{"phase 2 runs at the headers without body", []*extprocv3.ProcessingRequest{
			reqHeaders(true, ":method", "DELETE", ":path", "/x", ":authority", "example.test")}, []string{"immediate 405"}},
		{"query deny", []*extprocv3.ProcessingRequest{reqHeaders(true, ":method", "GET", ":path", "/?q=attack",
			":authority", "example.test")}, []string{"immediate 403"}},
		{"POST passes", []*extprocv3.ProcessingRequest{reqHeaders(false, post...), reqBody("a=b", true)},
			[]string{"headers", "body"}},
		{"body deny", []*extprocv3.ProcessingRequest{reqHeaders(false, post...), reqBody("a=attack", true)},
			[]string{"headers", "immediate 403"}},
		{"body too large", []*extprocv3.ProcessingRequest{reqHeaders(false, post...),
			reqBody("a="+strings.Repeat("b", 64), true)}, []string{"headers", "immediate 413"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := eng.NewStream()
			defer st.Close()
			var got []string
			for _, m := range tt.msgs {
				r, err := process(st, m)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, kind(r))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProcessRefusesStreamedBody(t *testing.T) {
	st := testEngine(t).NewStream()
	defer st.Close()
	if _, err := process(st, reqHeaders(false, ":method", "POST", ":path", "/")); err != nil {
		t.Fatal(err)
	}
	_, err := process(st, reqBody("a=b", false))
	if err == nil || !strings.Contains(err.Error(), "BUFFERED") {
		t.Errorf("got %v, want an error naming request_body_mode BUFFERED", err)
	}
}

func TestImmediate(t *testing.T) {
	r := immediate(&waf.Reply{Status: 403, Body: "blocked\n", Details: "wafbench_coraza_phase1"})
	ir := r.GetImmediateResponse()
	if ir == nil {
		t.Fatalf("got %T, want an ImmediateResponse", r.Response)
	}
	if got := ir.GetStatus().GetCode(); got != 403 {
		t.Errorf("status %d, want 403", got)
	}
	if string(ir.GetBody()) != "blocked\n" || ir.GetDetails() != "wafbench_coraza_phase1" {
		t.Errorf("body %q details %q", ir.GetBody(), ir.GetDetails())
	}
	hs := ir.GetHeaders().GetSetHeaders()
	if len(hs) != 1 || hs[0].GetHeader().GetKey() != "content-type" || string(hs[0].GetHeader().GetRawValue()) != "text/plain" {
		t.Errorf("headers %v, want content-type: text/plain", hs)
	}
}

func TestHeaderList(t *testing.T) {
	m := &corev3.HeaderMap{Headers: []*corev3.HeaderValue{
		{Key: ":path", RawValue: []byte("/a?b=c")},
		{Key: "x-old", Value: "v"},
		{Key: "x-both", Value: "old", RawValue: []byte("raw")},
	}}
	got := headerList(m)
	want := [][2]string{{":path", "/a?b=c"}, {"x-old", "v"}, {"x-both", "raw"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if headerList(nil) != nil {
		t.Error("nil map: want no headers")
	}
}

func TestExtprocRequestAttributes(t *testing.T) {
	attrs, err := structpb.NewStruct(map[string]any{
		"source.address": "10.0.0.1:5555", "destination.address": "127.0.0.1:10000", "request.protocol": "HTTP/2",
	})
	if err != nil {
		t.Fatal(err)
	}
	r := extprocRequest(&extprocv3.HttpHeaders{Headers: hmap(":method", "GET")},
		map[string]*structpb.Struct{"envoy.filters.http.ext_proc": attrs})
	if r.Client != "10.0.0.1:5555" || r.Server != "127.0.0.1:10000" || r.Proto != "HTTP/2" {
		t.Errorf("got client %q server %q proto %q", r.Client, r.Server, r.Proto)
	}
	if r := extprocRequest(&extprocv3.HttpHeaders{}, nil); r.Client != "" || r.Proto != "" {
		t.Errorf("no attributes: got %+v, want none", r)
	}
}

func TestResponseStatus(t *testing.T) {
	st, hs := responseStatus([][2]string{{":status", "404"}, {"content-type", "text/html"}, {":other", "x"}})
	if st != 404 || len(hs) != 1 || hs[0] != [2]string{"content-type", "text/html"} {
		t.Errorf("got %d %v", st, hs)
	}
}

func TestAuthzRequest(t *testing.T) {
	req := &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Source: &authv3.AttributeContext_Peer{Address: &corev3.Address{Address: &corev3.Address_SocketAddress{
			SocketAddress: &corev3.SocketAddress{Address: "::1", PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: 4242}},
		}}},
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "POST", Path: "/p?q=1", Host: "example.test", Protocol: "HTTP/1.1",
			Headers: map[string]string{"user-agent": "t", ":method": "POST", "accept": "*/*"},
			RawBody: []byte("a=b"),
		}},
	}}
	r, body := authzRequest(req)
	want := [][2]string{{":path", "/p?q=1"}, {":authority", "example.test"}, {":method", "POST"}, {"accept", "*/*"}, {"user-agent", "t"}}
	if fmt.Sprint(r.Headers) != fmt.Sprint(want) {
		t.Errorf("headers %v, want %v", r.Headers, want)
	}
	if r.Client != "[::1]:4242" || r.Server != "" || r.Proto != "HTTP/1.1" || string(body) != "a=b" {
		t.Errorf("got client %q server %q proto %q body %q", r.Client, r.Server, r.Proto, body)
	}
	req.Attributes.Request.Http.RawBody = nil
	req.Attributes.Request.Http.Body = "c=d"
	req.Attributes.Request.Http.HeaderMap = hmap(":method", "POST", "x-raw", "1")
	r, body = authzRequest(req)
	want = [][2]string{{":path", "/p?q=1"}, {":authority", "example.test"}, {":method", "POST"}, {"x-raw", "1"}}
	if fmt.Sprint(r.Headers) != fmt.Sprint(want) || string(body) != "c=d" {
		t.Errorf("header_map: headers %v body %q, want %v c=d", r.Headers, body, want)
	}
}

func TestCheck(t *testing.T) {
	s := &server{eng: testEngine(t)}
	check := func(path, body string, hdr map[string]string) *authv3.CheckResponse {
		h := map[string]string{":method": "POST", ":path": path, ":authority": "example.test",
			"content-type": "application/x-www-form-urlencoded"}
		for k, v := range hdr {
			h[k] = v
		}
		r, err := s.Check(context.Background(), &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
			Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{Headers: h, RawBody: []byte(body)}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := check("/", "a=b", nil); r.GetStatus().GetCode() != int32(code.Code_OK) || r.GetOkResponse() == nil {
		t.Errorf("benign: got %v, want OK", r)
	}
	for name, r := range map[string]*authv3.CheckResponse{
		"body":    check("/", "a=attack", nil),
		"query":   check("/?q=attack", "", nil),
		"phase 1": check("/", "", map[string]string{"x-block": "yes"}),
	} {
		d := r.GetDeniedResponse()
		if r.GetStatus().GetCode() != int32(code.Code_PERMISSION_DENIED) || d == nil || d.GetStatus().GetCode() != 403 {
			t.Errorf("%s: got %v, want denied 403", name, r)
			continue
		}
		if d.GetBody() != "Request blocked by wafbench coraza\n" {
			t.Errorf("%s: body %q, want the Coraza module's", name, d.GetBody())
		}
	}
	stats := map[string]uint64{}
	for _, st := range s.eng.Stats() {
		stats[st.Name] = st.Value
	}
	if stats["wafbench_coraza_requests"] != 4 || stats["wafbench_coraza_blocked_phase1"] != 1 || stats["wafbench_coraza_blocked_phase2"] != 2 {
		t.Errorf("counters %v, want requests 4, blocked_phase1 1, blocked_phase2 2", stats)
	}
}

func TestFlags(t *testing.T) {
	ok := []string{"--engine", "coraza", "--config", "f.json", "--listen", "unix:/tmp/x.sock", "--admin", "127.0.0.1:0"}
	o, err := parseFlags(ok, io.Discard)
	if err != nil || o.build != "coraza" {
		t.Fatalf("got %+v, %v; want build coraza", o, err)
	}
	with := func(k, v string) []string {
		out := append([]string(nil), ok...)
		for i := range out {
			if out[i] == k {
				out[i+1] = v
			}
		}
		return out
	}
	for name, args := range map[string][]string{
		"engine":     with("--engine", "naxsi"),
		"listen":     with("--listen", "127.0.0.1:9000"),
		"tcp listen": with("--listen", "tcp:localhost"),
		"admin":      with("--admin", "9901"),
		"config":     with("--config", ""),
		"unknown":    append(ok, "--nope"),
		"argument":   append(ok, "extra"),
	} {
		if _, err := parseFlags(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%s: got %v, want a usage error", name, err)
		}
	}
}

func TestRunRefusesConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "f.json")
	if err := os.WriteFile(cfg, []byte(`{"rules_file":"relative.conf"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	err := run(context.Background(), []string{"--engine", "coraza", "--config", cfg, "--listen", "tcp:127.0.0.1:0",
		"--admin", "127.0.0.1:0"}, &stdout, io.Discard)
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "rules_file") || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v, want a one-line usage error naming rules_file", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q, want no ready line", stdout.String())
	}
}

func TestListenUnix(t *testing.T) {
	dir := t.TempDir()
	// A stale socket (its listener gone, the file left) is replaced.
	stale := filepath.Join(dir, "stale.sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	ln, err := listen("unix", stale)
	if err != nil {
		t.Fatalf("stale socket: %v, want it replaced", err)
	}
	// A live one is not taken over.
	if _, err := listen("unix", stale); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("live socket: got %v, want an in-use error", err)
	}
	ln.Close()
	// Nor is another file.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := listen("unix", file); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("regular file: got %v, want a not-a-socket error", err)
	}
}
