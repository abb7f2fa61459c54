package load

import (
	"errors"
	"fmt"
	"net"
	"net/url"
)

// target is an HTTP URL to drive, split the way Options and Build want it.
type target struct {
	Addr string // host:port to connect to (port 80 when the URL has none)
	Host string // the URL's host[:port], the Host header Build adds
	Path string // the request-target: path and query
}

// errNotLoopback is wrapped by ParseTarget's error for a host that is not
// on this machine.
var errNotLoopback = errors.New("not a loopback address; wafbench only drives 127.0.0.0/8, ::1 and localhost")

// parseTarget parses an http://HOST[:PORT]/PATH URL. wafbench sends load to
// this machine only: a HOST other than a loopback address or localhost is
// refused (wrapping ErrNotLoopback).
func parseTarget(s string) (target, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return target{}, fmt.Errorf("want http://HOST:PORT/PATH, got %q", s)
	}
	if ip := net.ParseIP(u.Hostname()); (ip == nil && u.Hostname() != "localhost") || (ip != nil && !ip.IsLoopback()) {
		return target{}, fmt.Errorf("%s is %w", u.Hostname(), errNotLoopback)
	}
	t := target{Addr: u.Host, Host: u.Host, Path: u.RequestURI()}
	if u.Port() == "" {
		t.Addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return t, nil
}
