package load

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/downstream"
	"wafbench/driver/internal/usage"
)

// Invocation is one run of 'wafbench load' as its flags give it, before
// they are checked.
type Invocation struct {
	Target, Method, Body     string
	ConnMode, Arrival, Pacer string
	Downstream, TLSCA, CPUs  string
	Conns, Expect, Streams   int
	Warmup, Duration         time.Duration
	Timeout                  time.Duration
	Rate                     float64
	Seed, MaxRequests        int64
	Headers                  headers
}

// resolved is a checked Invocation: what Run takes, and the CPUs to pin
// the driver to (nil = not pinned).
type resolved struct {
	Options Options
	Request Request
	CPUs    []int
}

// Resolve checks inv against the flags it came from; every error is bad
// input (driver/internal/usage) naming the flag.
func (inv *Invocation) Resolve() (*resolved, error) {
	if inv.Target == "" {
		return nil, usage.Errorf("load: --target is required")
	}
	tgt, err := parseTarget(inv.Target)
	if errors.Is(err, errNotLoopback) {
		return nil, usage.Errorf("load: --target %v", err)
	}
	if err != nil {
		return nil, usage.Errorf("load: --target: %v", err)
	}
	r := &resolved{}
	if inv.CPUs != "" {
		if r.CPUs, err = cpu.ParseOnline(inv.CPUs); err != nil {
			return nil, usage.Errorf("load: --cpus: %v", err)
		}
	}
	var b []byte
	if inv.Body != "" {
		b = []byte(inv.Body)
	}
	r.Request = Build(inv.Method, tgt.Path, inv.Headers, b, tgt.Host)
	r.Request.ExpectStatus = inv.Expect
	o := Options{Target: tgt.Addr, Conns: inv.Conns, Warmup: inv.Warmup, Duration: inv.Duration, MaxRequests: inv.MaxRequests,
		Rate: inv.Rate, Timeout: inv.Timeout, Seed: inv.Seed, Streams: inv.Streams}
	if o.ConnMode, err = ParseConnMode(inv.ConnMode); err != nil {
		return nil, usage.Errorf("load: --conn-mode: %v", err)
	}
	if o.Arrival, err = ParseArrival(inv.Arrival); err != nil {
		return nil, usage.Errorf("load: --arrival: %v", err)
	}
	if o.Pacer, err = ParsePacer(inv.Pacer); err != nil {
		return nil, usage.Errorf("load: --pacer: %v", err)
	}
	if o.Downstream, err = downstream.Parse(inv.Downstream); err != nil {
		return nil, usage.Errorf("load: --downstream: %v", err)
	}
	if o.TLS, err = caConfig(inv.TLSCA); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, usage.Errorf("load: %v", err)
	}
	r.Options = o
	return r, nil
}

// caConfig is the TLS client configuration verifying the target with the
// CA certificates of the PEM file caFile; nil when caFile is empty.
func caConfig(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, usage.Errorf("load: --tls-ca: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, usage.Errorf("load: --tls-ca %s: no PEM certificate in it", caFile)
	}
	return &tls.Config{RootCAs: pool, ServerName: downstream.ServerName}, nil
}

// headers are extra request headers, each given as "Name: value"; it is a
// flag.Value for a repeatable --header flag.
type headers [][2]string

func (h *headers) String() string { return fmt.Sprint(*h) }

// Set adds the header "Name: value" v.
func (h *headers) Set(v string) error {
	k, val, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want \"Name: value\", got %q", v)
	}
	*h = append(*h, [2]string{strings.TrimSpace(k), strings.TrimSpace(val)})
	return nil
}
