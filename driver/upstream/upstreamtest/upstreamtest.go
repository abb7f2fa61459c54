// Package upstreamtest serves the benchmark upstream on loopback for the
// tests of the packages that drive it.
package upstreamtest

import (
	"context"
	"net"
	"testing"

	"wafbench/driver/upstream"
)

// Start serves an upstream.Server on a kernel-chosen loopback port until
// the test ends, and returns it with its address.
func Start(tb testing.TB) (*upstream.Server, string) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := new(upstream.Server)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(ctx, ln)
	}()
	tb.Cleanup(func() { cancel(); <-done })
	return s, ln.Addr().String()
}
