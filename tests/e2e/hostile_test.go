//go:build integration

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"wafbench/driver/envoy"
)

// hostileCase is one hostile input. send writes it on a fresh connection and
// returns the responses it read. want is the outcome per mode: the statuses
// in order, each followed by " waf" when the WAF module (not Envoy or the
// upstream) produced it, e.g. "413 waf"; "-" for no response. reaches is how
// many requests get as far as the WAF filter (0 when Envoy's codec rejects
// the request first).
type hostileCase struct {
	name    string
	why     string
	send    func(c *conn) ([]*response, error)
	want    map[envoy.Mode]string
	reaches int
	floods  map[envoy.Mode]int // connections Envoy's HTTP/1 codec closes for response flooding
	// sendIn, when set, is used instead of send, for cases that wait on
	// Envoy's own counters half-way.
	sendIn func(t *testing.T, mode envoy.Mode, c *conn) ([]*response, error)
}

// waitUntil polls cond, a check of an explicit counter, until it holds; it
// fails the test after a minute, which only a hung Envoy reaches.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// streamsSeen counts the requests Envoy has begun: the WAF module's own
// request counter (the filter saw the headers), or Envoy's count of
// downstream requests in passthrough.
func streamsSeen(t *testing.T, mode envoy.Mode) int64 {
	if mode.IsWAF() {
		return counters(t, mode)["requests"]
	}
	return envoyStats(t, mode)["http.ingress.downstream_rq_total"]
}

// pipeline writes reqs in one write and reads the responses in order,
// stopping at the first that does not come.
func pipeline(reqs ...request) func(c *conn) ([]*response, error) {
	return func(c *conn) ([]*response, error) {
		var buf bytes.Buffer
		for _, r := range reqs {
			buf.Write(r.bytes())
		}
		if err := c.write(buf.Bytes()); err != nil {
			return nil, err
		}
		var out []*response
		for range reqs {
			resp, err := c.read(reqs[len(out)].Method)
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				for len(out) < len(reqs) {
					out = append(out, nil) // closed by Envoy: shown as "-"
				}
				return out, nil
			}
			if err != nil {
				return out, fmt.Errorf("response %d of %d: %w", len(out)+1, len(reqs), err)
			}
			out = append(out, resp)
		}
		return out, nil
	}
}

// floodStat counts HTTP/1 connections Envoy closed for response flooding.
const floodStat = "http1.response_flood"

// moduleBodies are the local-reply bodies of the two modules.
var moduleBodies = map[envoy.Mode]string{
	envoy.ModSecurity: "Request blocked by wafbench modsecurity filter",
	envoy.Coraza:      "Request blocked by wafbench coraza",
}

func outcome(mode envoy.Mode, rs []*response) (string, int) {
	if len(rs) == 0 {
		return "-", 0
	}
	var parts []string
	waf := 0
	for _, r := range rs {
		if r == nil {
			parts = append(parts, "-")
			continue
		}
		s := itoa(r.Status)
		if sig, ok := moduleBodies[engineMode(mode)]; ok && bytes.Contains(r.Body, []byte(sig)) {
			s += " waf"
			waf++
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ","), waf
}

// one sends a request and reads its response.
func one(r request) func(c *conn) ([]*response, error) {
	return func(c *conn) ([]*response, error) {
		resp, err := c.do(r.Method, r.bytes())
		if err != nil {
			return nil, err
		}
		return []*response{resp}, nil
	}
}

// streamed writes raw from a goroutine while reading the response, for
// bodies the server may answer (and stop reading) before they are complete.
func streamed(method string, raw []byte) func(c *conn) ([]*response, error) {
	return func(c *conn) ([]*response, error) {
		werr := make(chan error, 1)
		go func() {
			for off := 0; off < len(raw); off += 256 << 10 {
				if err := c.write(raw[off:min(off+256<<10, len(raw))]); err != nil {
					werr <- err
					return
				}
			}
			werr <- nil
		}()
		resp, err := c.read(method)
		c.Close() // unblocks the writer if the server stopped reading
		<-werr
		if err != nil {
			return nil, err
		}
		return []*response{resp}, nil
	}
}

func withBase(extra ...[2]string) [][2]string {
	return append(append([][2]string{}, baseHeaders...), extra...)
}

func form(extra ...[2]string) [][2]string {
	return withBase(append([][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}, extra...)...)
}

func hostileCases() []hostileCase {
	const waf403 = "403 waf"
	all := func(s string) map[envoy.Mode]string {
		return map[envoy.Mode]string{envoy.Passthrough: s, envoy.ModSecurity: s, envoy.Coraza: s}
	}
	all1 := map[envoy.Mode]int{envoy.Passthrough: 1, envoy.ModSecurity: 1, envoy.Coraza: 1}
	wafOnly := func(s string) map[envoy.Mode]string {
		return map[envoy.Mode]string{envoy.Passthrough: "200", envoy.ModSecurity: s, envoy.Coraza: s}
	}

	// Header block sizes: Envoy's max_request_headers_kb is 60 (KiB, request
	// line and headers); max_headers_count defaults to 100.
	bigHeader := func(total int) request {
		r := request{Method: "GET", Target: "/safe", Headers: withBase([2]string{"X-Big", ""})}
		head := len(r.bytes())
		r.Headers[len(r.Headers)-1][1] = strings.Repeat("a", total-head)
		return r
	}
	nHeaders := func(n int) request {
		hs := withBase()
		for i := len(hs); i < n; i++ {
			hs = append(hs, [2]string{fmt.Sprintf("X-Extra-%03d", i), "v"})
		}
		return request{Method: "GET", Target: "/safe", Headers: hs}
	}
	tenMiB := bytes.Repeat([]byte("a"), 10<<20)
	copy(tenMiB, "value=")
	args := bytes.Repeat([]byte("a=1&"), 100000)
	chunkedForm := func(chunks ...string) request {
		return request{Method: "POST", Target: "/form", Headers: form([2]string{"Transfer-Encoding", "chunked"}), Body: chunked(chunks...)}
	}
	ok := request{Method: "GET", Target: "/safe", Headers: baseHeaders}
	post := request{Method: "POST", Target: "/form", Headers: form(), Body: []byte("value=hello")}
	xss := request{Method: "GET", Target: "/search?q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E", Headers: baseHeaders}
	phase1 := request{Method: "GET", Target: "/safe", Headers: withBase([2]string{envoy.BlockHeader, envoy.BlockValue})}
	json := withBase([2]string{"Content-Type", "application/json"})
	evasion := append(bytes.Repeat([]byte("a=1&"), 1000), "q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E"...)
	// abort sends the headers and half the body, waits until Envoy has
	// begun the request (in a WAF mode: the filter saw the headers), then
	// closes the connection.
	abort := func(t *testing.T, mode envoy.Mode, c *conn) ([]*response, error) {
		body := bytes.Repeat([]byte("value=x&"), 4096) // 32 KiB
		r := request{Method: "POST", Target: "/form", Headers: form(), Body: body}
		raw := r.bytes()
		before := streamsSeen(t, mode)
		if err := c.write(raw[:len(raw)-len(body)/2]); err != nil {
			return nil, err
		}
		waitUntil(t, "Envoy to begin the aborted request", func() bool { return streamsSeen(t, mode) > before })
		c.Close()
		return nil, nil
	}

	return []hostileCase{
		{name: "headers_59KiB", why: "one header fills the block to 59 KiB, under Envoy's 60 KiB limit",
			send: one(bigHeader(59 << 10)), want: all("200"), reaches: 1},
		{name: "headers_61KiB", why: "over max_request_headers_kb: Envoy's codec answers 431, the filter never runs",
			send: one(bigHeader(61 << 10)), want: all("431"), reaches: 0},
		{name: "headers_100", why: "100 headers: Envoy's max_headers_count",
			send: one(nHeaders(100)), want: all("200"), reaches: 1},
		{name: "headers_101", why: "one over max_headers_count: Envoy's codec answers 431",
			send: one(nHeaders(101)), want: all("431"), reaches: 0},
		{name: "body_10MiB", why: "Content-Length 10 MiB > max_body_bytes 1 MiB: the module answers 413 (README of each module)",
			send: streamed("POST", request{Method: "POST", Target: "/form", Headers: form(), Body: tenMiB}.bytes()),
			want: wafOnly("413 waf"), reaches: 1},
		{name: "body_10MiB_chunked", why: "the same without Content-Length: the limit is checked as chunks arrive",
			send: streamed("POST", chunkedForm(string(tenMiB[:5<<20]), string(tenMiB[5<<20:])).bytes()),
			want: wafOnly("413 waf"), reaches: 1},
		{name: "args_100k", why: "a=1& x 100000 (400 KB, under 1 MiB): more than 1000 arguments, which the shared " +
			"configuration denies in both engines (rule 200007, &ARGS > 1000, status 400) rather than inspect only the first 1000",
			send: one(request{Method: "POST", Target: "/form", Headers: form(), Body: args}),
			want: wafOnly("400 waf"), reaches: 1},
		{name: "args_limit_evasion", why: "1000 benign arguments then an XSS one: argument 1001 would go uninspected " +
			"past the argument limit, so the request is denied for its count (rule 200007, 400) in both engines",
			send: one(request{Method: "POST", Target: "/form", Headers: form(), Body: evasion}),
			want: wafOnly("400 waf"), reaches: 1},
		{name: "invalid_percent_encoding", why: "%zz% in the query: CRS 4.25 validates URL encoding only in " +
			"urlencoded bodies (920240, PL2); ARGS get the undecoded text: passes",
			send: one(request{Method: "GET", Target: "/search?q=%zz%", Headers: baseHeaders}),
			want: all("200"), reaches: 1},
		{name: "nul_raw_in_query", why: "a raw NUL byte in the request line: Envoy's codec answers 400, the filter never runs",
			send: one(request{Method: "GET", Target: "/search?q=a\x00b", Headers: baseHeaders}),
			want: all("400"), reaches: 0},
		{name: "nul_encoded_in_query", why: "%00 in the query: 920270 (validateByteRange 1-255 on ARGS)",
			send: one(request{Method: "GET", Target: "/search?q=a%00b", Headers: baseHeaders}),
			want: wafOnly(waf403), reaches: 1},
		{name: "nul_raw_in_form_body", why: "a raw NUL in an urlencoded value: 920270 on ARGS",
			send: one(request{Method: "POST", Target: "/form", Headers: form(), Body: []byte("value=a\x00b&x=1")}),
			want: wafOnly(waf403), reaches: 1},
		{name: "nul_escaped_in_json_body", why: "\\u0000 in a valid JSON string: both JSON parsers decode it into ARGS, 920270",
			send: one(request{Method: "POST", Target: "/json", Headers: json, Body: []byte(`{"message":"a\u0000b"}`)}),
			want: wafOnly(waf403), reaches: 1},
		{name: "nul_raw_in_json_body", why: "a raw NUL inside a JSON string is invalid JSON: the body cannot be parsed " +
			"(REQBODY_ERROR) and the shared configuration denies that in both engines (rule 200002, 400)",
			send: one(request{Method: "POST", Target: "/json", Headers: json, Body: []byte("{\"message\":\"a\x00b\"}")}),
			want: wafOnly("400 waf"), reaches: 1},
		{name: "chunked_benign", why: "urlencoded body in 4 chunks",
			send: one(chunkedForm("name=al", "ice&comm", "ent=hello+world", "&rating=5")), want: all("200"), reaches: 1},
		{name: "chunked_split_sqli", why: "the seed SQLi body split across chunks is reassembled before inspection",
			send: one(chunkedForm("user=1234", "+OR+", "1%3D1")), want: wafOnly(waf403), reaches: 1},
		{name: "pipelined_3_benign", why: "GET, form POST, GET in one write: answered in order",
			send: pipeline(ok, post, ok), want: all("200,200,200"), reaches: 3},
		{name: "pipelined_3_block_middle", why: "GET, XSS GET, GET in one write: Envoy's HTTP/1 codec closes the connection " +
			"before the third request (\"Too many responses queued\", http1.response_flood): a local reply queued right " +
			"behind the first response reaches the codec's limit of 2 queued responses. Passthrough's own direct_response " +
			"403 behaves the same (pipelined_3_phase1_middle); not a module bug",
			send: pipeline(ok, xss, ok), want: map[envoy.Mode]string{envoy.Passthrough: "200,200,200",
				envoy.ModSecurity: "200,403 waf,-", envoy.Coraza: "200,403 waf,-"}, reaches: 2, floods: map[envoy.Mode]int{envoy.ModSecurity: 1, envoy.Coraza: 1}},
		{name: "pipelined_3_phase1_middle", why: "GET, phase-1 block GET, GET in one write: same codec limit in every mode",
			send: pipeline(ok, phase1, ok), want: map[envoy.Mode]string{envoy.Passthrough: "200,403,-",
				envoy.ModSecurity: "200,403 waf,-", envoy.Coraza: "200,403 waf,-"}, reaches: 2, floods: all1},
		{name: "abort_mid_body", why: "headers and half of a 32 KiB Content-Length body, then close",
			sendIn: abort, want: all("-"), reaches: 1},
	}
}

// TestHostileInput sends each hostile case through every mode on a fresh
// connection, checks the outcome, checks after each that Envoy still
// answers a benign GET with 200, and at the end checks the module counters
// against what was sent and seen. It logs Envoy's VmRSS afterwards.
func TestHostileInput(t *testing.T) {
	cases := hostileCases()
	for _, mode := range fixtureModes {
		t.Run(string(mode), func(t *testing.T) {
			p := proxy(t, mode)
			var before map[string]int64
			if mode.IsWAF() {
				before = counters(t, mode)
			}
			floodsBefore := envoyStats(t, mode)[floodStat]
			rssBefore, _ := vmRSS(p.PID)
			reaches, wafReplies, floods := 0, 0, 0
			for _, hc := range cases {
				t.Run(hc.name, func(t *testing.T) {
					c := dial(t, mode)
					defer c.Close()
					start := time.Now()
					var rs []*response
					var err error
					if hc.sendIn != nil {
						rs, err = hc.sendIn(t, mode, c)
					} else {
						rs, err = hc.send(c)
					}
					got, waf := outcome(mode, rs)
					if err != nil && !errors.Is(err, io.EOF) {
						got += " (" + err.Error() + ")"
					}
					wafReplies += waf
					t.Logf("%s %s: %s in %v (%s)", mode, hc.name, got, time.Since(start).Round(time.Millisecond), hc.why)
					if want := hc.want[engineMode(mode)]; got != want {
						t.Errorf("%s %s: got %q, want %q (%s)", mode, hc.name, got, want, hc.why)
					}
					reaches += hc.reaches
					floods += hc.floods[engineMode(mode)]
					assertServing(t, mode, hc.name)
					reaches++
				})
			}
			if d := envoyStats(t, mode)[floodStat] - floodsBefore; d != int64(floods) {
				t.Errorf("%s: %s +%d, want +%d", mode, floodStat, d, floods)
			}
			if !mode.IsWAF() {
				return
			}
			after := counters(t, mode)
			d := func(k string) int64 { return after[k] - before[k] }
			blocked := d("blocked_phase1") + d("blocked_phase2") + d("body_too_large")
			t.Logf("%s counters (delta over the hostile suite): requests %d, blocked_phase1 %d, blocked_phase2 %d, body_too_large %d, engine_errors %d",
				mode, d("requests"), d("blocked_phase1"), d("blocked_phase2"), d("body_too_large"), d("engine_errors"))
			if d("requests") != int64(reaches) {
				t.Errorf("%s: requests counter +%d, want +%d (requests that reached the filter)", mode, d("requests"), reaches)
			}
			if blocked != int64(wafReplies) {
				t.Errorf("%s: blocked counters +%d, want +%d (local replies of the module seen by the client)", mode, blocked, wafReplies)
			}
			if d("engine_errors") != 0 {
				t.Errorf("%s: engine_errors +%d, want 0", mode, d("engine_errors"))
			}
			if rss, err := vmRSS(p.PID); err != nil {
				t.Error(err)
			} else {
				t.Logf("%s: Envoy VmRSS %.1f MiB before the hostile suite, %.1f MiB after", mode,
					float64(rssBefore)/1024, float64(rss)/1024)
			}
		})
	}
}
