// Package direct is the host of ref-direct: no proxy at all, the client
// talks to the benchmark upstream itself. It is the floor every proxy is
// measured against, and runs no engine.
package direct

import (
	"context"
	"errors"

	"wafbench/driver/downstream"
	"wafbench/driver/hosts"
	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// Host is the no-proxy host.
type Host struct{}

// Kind is modes.Direct.
func (Host) Kind() modes.Host { return modes.Direct }

// Proxy is false: there is no process.
func (Host) Proxy() bool { return false }

// Downstreams is plain HTTP/1.1: the upstream speaks nothing else.
func (Host) Downstreams() []downstream.Protocol { return []downstream.Protocol{downstream.H1} }

// Title is "no proxy".
func (Host) Title() string { return "no proxy" }

// ProcessName is "no proxy".
func (Host) ProcessName() string { return "no proxy" }

// Check needs nothing.
func (Host) Check(modes.Mode, hosts.Stack) error { return nil }

// Start starts nothing: requests go to the upstream, and there is no
// process to sample, verify or stop (PID 0).
func (Host) Start(_ context.Context, _ modes.Mode, _ hosts.Stack, w hosts.Where) (*hosts.Process, error) {
	p := hosts.NewProcess(nil)
	p.Addr = w.UpstreamAddr
	return p, nil
}

var errNoEngine = errors.New("ref-direct runs no engine")

// Identify has nothing to prove: no engine runs.
func (Host) Identify(context.Context, modes.Mode, *hosts.Process) (*hosts.Identity, error) {
	return nil, errNoEngine
}

// Describe has no module to describe.
func (Host) Describe(modes.Mode, string, *result.Module, *[]string) error { return errNoEngine }
