package runner

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
	"time"

	"wafbench/driver/downstream"
	"wafbench/driver/hosts"
	"wafbench/driver/hosts/all"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
	"wafbench/driver/result"
)

// CheckDownstream reports the first of ms or cases that cannot run over p
// (run --downstream; "" is plain HTTP/1.1): a mode whose host does not
// serve p (hosts.Host.Downstreams), or a workload that measures verdicts
// or runs an attack stream, whose clients speak plain HTTP/1.1 only.
func CheckDownstream(p downstream.Protocol, ms []modes.Mode, cases []profile.Case) error {
	p = p.Or()
	if p == downstream.H1 {
		return nil
	}
	for _, m := range ms {
		if err := hosts.CheckDownstream(all.Of(m), m, p); err != nil {
			return fmt.Errorf("--downstream %s: %w (run it with --downstream h1)", p, err)
		}
	}
	for _, c := range cases {
		if w := c.Workload; w.MeasureVerdict || w.AttackStream != "" {
			return fmt.Errorf("--downstream %s: workload %s measures verdicts or runs an attack stream, which speak HTTP/1.1 only", p, w.Name)
		}
	}
	return nil
}

// prepareDownstream checks that every trial can run over cfg.Downstream
// (CheckDownstream) and makes the run's certificate for a TLS protocol.
func (cfg *runner) prepareDownstream() error {
	ms := make([]modes.Mode, len(cfg.Trials))
	for i, tr := range cfg.Trials {
		ms[i] = cfg.Modes[tr.Mode]
	}
	if err := CheckDownstream(cfg.Downstream, ms, cfg.Cases); err != nil {
		return err
	}
	if p := cfg.Downstream.Or(); p.TLS() && cfg.cert == nil {
		cert, err := downstream.WriteCert(filepath.Join(cfg.Dir, "tls"))
		if err != nil {
			return err
		}
		cfg.cert, cfg.clientTLS = cert, cert.ClientConfig(p)
	}
	return nil
}

// client is how the load client speaks to a trial's host: the protocol
// and, over TLS, the configuration that trusts the run's certificate. The
// zero value is plain HTTP/1.1.
type client struct {
	downstream downstream.Protocol
	tls        *tls.Config
	timeout    time.Duration // per preflight request; 0 = 10 s
}

// client is the trials' client (run --downstream); under callgrind its
// preflight requests may take as long as the run's timeout.
func (cfg *runner) client() client {
	c := client{downstream: cfg.Downstream, tls: cfg.clientTLS}
	if cfg.Callgrind != nil {
		c.timeout = cfg.Timeout
	}
	return c
}

// requestTimeout bounds one preflight request.
func (c client) requestTimeout() time.Duration {
	if c.timeout > 0 {
		return c.timeout
	}
	return 10 * time.Second
}

// downstreamStack is st serving cfg's downstream protocol, with the run's
// certificate over TLS.
func (cfg *runner) downstreamStack(st hosts.Stack) hosts.Stack {
	st.Downstream = cfg.Downstream
	if cfg.cert != nil {
		st.CertFile, st.KeyFile = cfg.cert.CertFile, cfg.cert.KeyFile
	}
	return st
}

// recordDownstream notes the protocol in a record; plain HTTP/1.1 with one
// stream is left out, as records before the field had it.
func (cfg *Config) recordDownstream(rec *result.Record) {
	if p := cfg.Downstream.Or(); p != downstream.H1 {
		rec.Downstream = string(p)
		if p.HTTP2() {
			rec.Streams = max(cfg.Streams, 1)
		}
	}
}
