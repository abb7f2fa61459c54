// Package all lists the hosts wafbench runs modes in, one package each
// under driver/hosts. It is the one place that knows them all: the runner,
// meta and the CLI ask Of for a mode's host.
package all

import (
	"context"
	"fmt"

	"wafbench/driver/downstream"
	"wafbench/driver/hosts"
	"wafbench/driver/hosts/caddy"
	"wafbench/driver/hosts/direct"
	"wafbench/driver/hosts/envoyhost"
	"wafbench/driver/hosts/nginx"
	"wafbench/driver/modes"
	"wafbench/driver/result"
)

// Hosts lists every host.
var Hosts = []hosts.Host{envoyhost.Host{}, nginx.Host{}, caddy.Host{}, direct.Host{}}

// Of is the host that serves mode m. A mode no host serves (a Mode not
// resolved by modes.Registry) gets a host whose every answer is an error
// naming the mode.
func Of(m modes.Mode) hosts.Host {
	for _, h := range Hosts {
		if h.Kind() == m.Host {
			return h
		}
	}
	return unknown{}
}

// unknown is the host of a mode no host serves.
type unknown struct{}

func (unknown) Kind() modes.Host                   { return "" }
func (unknown) ProcessName() string                { return "proxy" }
func (unknown) Proxy() bool                        { return true }
func (unknown) Downstreams() []downstream.Protocol { return nil }
func (unknown) Title() string                      { return "proxy" }
func (unknown) err(m modes.Mode) error {
	return fmt.Errorf("mode %q: no host serves it (not a mode modes.Registry resolved)", m.String())
}
func (u unknown) Check(m modes.Mode, _ hosts.Stack) error { return u.err(m) }
func (u unknown) Start(_ context.Context, m modes.Mode, _ hosts.Stack, _ hosts.Where) (*hosts.Process, error) {
	return nil, u.err(m)
}
func (u unknown) Identify(_ context.Context, m modes.Mode, _ *hosts.Process) (*hosts.Identity, error) {
	return nil, u.err(m)
}
func (u unknown) Describe(m modes.Mode, _ string, _ *result.Module, _ *[]string) error {
	return u.err(m)
}
