package runner

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"

	"wafbench/driver/downstream"
	"wafbench/driver/hosts"
	"wafbench/driver/hosts/all"
	"wafbench/driver/load"
	"wafbench/driver/modes"
	"wafbench/internal/crs"
)

// The canary requests of the preflight. They carry the headers CRS expects of
// a benign client, so the benign one scores nothing; the attack is a classic
// tautology that CRS's libinjection rule (942100) denies at paranoia level 1
// in both engines.
var (
	canaryHeaders = [][2]string{{"User-Agent", "wafbench-preflight/1.0"}, {"Accept", "*/*"}}
	canaryBenign  = load.Build("GET", "/wafbench-preflight?q=hello", canaryHeaders, nil, "bench.local")
	canaryAttack  = load.Build("GET", "/wafbench-preflight?id=1%27%20OR%20%271%27%3D%271", canaryHeaders, nil, "bench.local")
)

// Preflight is what a WAF trial proved before it measured anything: the
// host's identity check (hosts.Host.Identify).
type Preflight = hosts.Identity

// preflight proves, before a WAF trial's first measurement, that mode m
// enforces — a benign canary passes, a canary SQL injection is denied and,
// in Envoy and Caddy, the module's own counters moved — and, in Envoy and
// Caddy, that the module loaded is the engine and build m names. The error is one line that
// names mode, build and cause.
//
// With conformance (a crs-test host, DetectionOnly), only the identity is
// proved here: the canaries are not denied by design, and the conformance
// runner proves the host logs matches. Without it, a host loading the crs-test
// configuration is refused by name. The canaries go as via speaks: in the
// protocol the trial measures.
func preflight(ctx context.Context, m modes.Mode, p *proxy, conformance bool, via client) (*Preflight, error) {
	if m.Engine == "" {
		return nil, nil
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: preflight: %s", m, fmt.Sprintf(format, a...))
	}
	if !conformance && filepath.Base(p.RulesFile) == crs.ConformanceFile {
		return nil, fail("rules file %s is the %s conformance configuration (DetectionOnly): a measured trial never runs it", p.RulesFile, crs.ConformanceName)
	}
	pf, err := all.Of(m).Identify(ctx, m, p)
	if err != nil {
		return nil, fail("%v", err)
	}

	if conformance {
		return pf, nil
	}
	var before map[string]uint64
	if p.Stats != nil {
		if before, err = hosts.ModuleCounters(ctx, p.Stats, m.Engine); err != nil {
			return nil, fail("%v", err)
		}
	}
	if st, err := roundTrip(ctx, p.Addr, canaryBenign, via); err != nil {
		return nil, fail("benign canary request: %v", err)
	} else if st != 200 {
		return nil, fail("benign canary request answered %d, want 200 — the rules block ordinary traffic", st)
	}
	if st, err := roundTrip(ctx, p.Addr, canaryAttack, via); err != nil {
		return nil, fail("canary SQL injection: %v", err)
	} else if st != 403 {
		return nil, fail("canary SQL injection answered %d — rules not enforcing (DetectionOnly?)", st)
	}
	if p.Stats != nil {
		after, err := hosts.ModuleCounters(ctx, p.Stats, m.Engine)
		if err != nil {
			return nil, fail("%v", err)
		}
		prefix := "wafbench_" + m.Engine + "_"
		if d := after[prefix+"requests"] - before[prefix+"requests"]; d < 2 {
			return nil, fail("the module's %srequests counter moved by %d over 2 canary requests — the host did not run the module", prefix, d)
		}
		blocked := after[prefix+"blocked_phase1"] + after[prefix+"blocked_phase2"] - before[prefix+"blocked_phase1"] - before[prefix+"blocked_phase2"]
		if blocked < 1 {
			return nil, fail("the canary was denied but the module's blocked counters did not move — something else answered 403")
		}
	}
	return pf, nil
}

// roundTrip sends one serialized request on a fresh connection to addr and
// returns the response status. Over TLS or HTTP/2 the load engine sends it,
// in the protocol via speaks.
func roundTrip(ctx context.Context, addr string, req load.Request, via client) (int, error) {
	if via.downstream.Or() != downstream.H1 {
		return roundTripVia(ctx, addr, req, via)
	}
	ctx, cancel := context.WithTimeout(ctx, via.requestTimeout())
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write(req.Raw); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, fmt.Errorf("reading response: %w", err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// roundTripVia sends one request to addr with the load engine, over via's
// protocol, and returns the status of the first response.
func roundTripVia(ctx context.Context, addr string, req load.Request, via client) (int, error) {
	opts := load.Options{Target: addr, Conns: 1, Duration: via.requestTimeout(), MaxRequests: 1,
		Timeout: via.requestTimeout(), Downstream: via.downstream, TLS: via.tls}
	res, err := load.Run(ctx, opts, req)
	if err != nil {
		return 0, err
	}
	for st, n := range res.Statuses {
		if n > 0 {
			return st, nil
		}
	}
	return 0, fmt.Errorf("no response in %v over %s (errors %v)", via.requestTimeout(), via.downstream, res.Errors)
}
