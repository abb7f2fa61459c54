// Command wafbench-extproc serves one WAF engine to Envoy over gRPC, as an
// external processor (envoy.filters.http.ext_proc, service
// envoy.service.ext_proc.v3.ExternalProcessor) and as an external
// authorization service (envoy.filters.http.ext_authz, service
// envoy.service.auth.v3.Authorization), both on one listener. It runs the
// code the engine's Envoy dynamic module runs (package waf) with the
// module's filter_config, counters and self-report line, so the same engine
// can be measured inside Envoy and beside it. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"

	"wafbench/filters/extproc/waf"
)

// errUsage marks errors that exit 2 (bad flags, a refused configuration).
var errUsage = errors.New("usage")

// usageError is a one-line error that exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string   { return e.msg }
func (e usageError) Is(t error) bool { return t == errUsage }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintf(os.Stderr, "wafbench-extproc: %v\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "wafbench-extproc: %v\n", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	engine string
	config string
	listen string
	admin  string
	build  string
	grace  time.Duration
}

const usageText = `Usage: wafbench-extproc --engine coraza|modsecurity --config FILE --listen ADDR --admin HOST:PORT

Serves one WAF engine to Envoy over gRPC: ext_proc (envoy.service.ext_proc.v3)
and ext_authz (envoy.service.auth.v3) on one listener, with the code, the
filter_config, the counters and the self-report line of the engine's Envoy
module. On start it prints the self-report line on stderr, then
"wafbench-extproc ready engine=E listen=ADDR admin=ADDR gomaxprocs=N" on
stdout once it accepts. SIGTERM or SIGINT stops it gracefully (exit 0).

Flags:
`

const examplesText = `
Examples:
  wafbench-extproc --engine coraza --config filter.json --listen unix:/run/waf.sock --admin 127.0.0.1:9901
  wafbench-extproc --engine modsecurity --config filter.json --listen tcp:127.0.0.1:50051 --admin 127.0.0.1:0
`

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("wafbench-extproc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.engine, "engine", "", "WAF engine: "+strings.Join(waf.Engines, " or ")+" (required)")
	fs.StringVar(&o.config, "config", "", "file holding the filter_config string the engine's Envoy module takes, e.g.\n"+
		`{"rules_file":"/abs/main.conf","inspect_response":false,"max_body_bytes":1048576} (required)`)
	fs.StringVar(&o.listen, "listen", "", "gRPC listener: unix:PATH (a stale socket file is replaced, a live one refused) or tcp:HOST:PORT\n(port 0 picks a free port; the ready line names it) (required)")
	fs.StringVar(&o.admin, "admin", "", "HTTP admin listener HOST:PORT serving GET /stats?format=json and GET /ready\n(port 0 picks a free port) (required)")
	fs.StringVar(&o.build, "build", "", "build name the self-report line gives (default: the engine's name, as its default module build)")
	fs.DurationVar(&o.grace, "stop-grace", 5*time.Second, "on SIGTERM/SIGINT, how long open gRPC streams may finish before they are cut")
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
		fmt.Fprint(stderr, examplesText)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return o, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return o, o.validate()
}

// validate checks the flags and fills the defaults.
func (o *options) validate() error {
	switch {
	case o.engine == "":
		return usageError{"--engine: want " + strings.Join(waf.Engines, " or ") + ", got nothing"}
	case !slices.Contains(waf.Engines, o.engine):
		return usageError{fmt.Sprintf("--engine: want %s, got %q", strings.Join(waf.Engines, " or "), o.engine)}
	case o.config == "":
		return usageError{"--config: want the file holding the filter_config, got nothing"}
	case o.admin == "":
		return usageError{"--admin: want HOST:PORT, got nothing"}
	case o.grace < 0:
		return usageError{fmt.Sprintf("--stop-grace: want >= 0, got %v", o.grace)}
	}
	if _, _, err := splitListen(o.listen); err != nil {
		return usageError{err.Error()}
	}
	if _, _, err := net.SplitHostPort(o.admin); err != nil {
		return usageError{fmt.Sprintf("--admin: want HOST:PORT, got %q", o.admin)}
	}
	if o.build == "" {
		o.build = o.engine
	}
	return nil
}

// splitListen parses --listen into a network and an address.
func splitListen(s string) (network, addr string, err error) {
	switch {
	case strings.HasPrefix(s, "unix:") && len(s) > len("unix:"):
		return "unix", strings.TrimPrefix(s, "unix:"), nil
	case strings.HasPrefix(s, "tcp:"):
		addr = strings.TrimPrefix(s, "tcp:")
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return "", "", fmt.Errorf("--listen: want tcp:HOST:PORT, got %q", s)
		}
		return "tcp", addr, nil
	}
	return "", "", fmt.Errorf("--listen: want unix:PATH or tcp:HOST:PORT, got %q", s)
}

// listen opens the gRPC listener; a stale unix socket file (one nobody
// accepts on) is removed first; a live socket or any other file is an
// error.
func listen(network, addr string) (net.Listener, error) {
	if network == "unix" {
		if fi, err := os.Lstat(addr); err == nil {
			if fi.Mode()&os.ModeSocket == 0 {
				return nil, fmt.Errorf("--listen: %s exists and is not a socket", addr)
			}
			if c, err := net.DialTimeout("unix", addr, time.Second); err == nil {
				c.Close()
				return nil, fmt.Errorf("--listen: %s is in use by a running server", addr)
			}
			if err := os.Remove(addr); err != nil {
				return nil, fmt.Errorf("--listen: remove stale socket: %w", err)
			}
		}
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	return ln, nil
}

// run is the command: it returns when ctx ends (a signal) or a listener
// fails.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := os.ReadFile(o.config)
	if err != nil {
		return usageError{fmt.Sprintf("--config: %v", err)}
	}
	eng, err := waf.Open(o.engine, cfg, o.build)
	if err != nil {
		return usageError{err.Error()}
	}
	defer eng.Close()
	fmt.Fprintln(stderr, eng.SelfReport())

	network, addr, _ := splitListen(o.listen)
	ln, err := listen(network, addr)
	if err != nil {
		return err
	}
	if network == "unix" {
		defer os.Remove(addr)
	}
	aln, err := net.Listen("tcp", o.admin)
	if err != nil {
		ln.Close()
		return fmt.Errorf("--admin: %w", err)
	}

	// Messages up to the body limit and headers; gRPC's default is 4 MiB.
	maxMsg := max(4<<20, eng.MaxBodyBytes()+1<<20)
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(maxMsg))
	srv := &server{eng: eng}
	extprocv3.RegisterExternalProcessorServer(gs, srv)
	authv3.RegisterAuthorizationServer(gs, srv)
	adm := &admin{eng: eng}
	hs := &http.Server{Handler: adm.handler(), ReadHeaderTimeout: 10 * time.Second}

	errc := make(chan error, 2)
	go func() { errc <- gs.Serve(ln) }()
	go func() { errc <- hs.Serve(aln) }()
	adm.ready.Store(true)
	listenAddr := ln.Addr().String()
	if network == "tcp" {
		listenAddr = "tcp:" + listenAddr
	} else {
		listenAddr = "unix:" + addr
	}
	// GOMAXPROCS follows the CPUs the server was pinned to: the driver
	// records it beside the placement.
	fmt.Fprintf(stdout, "wafbench-extproc ready engine=%s listen=%s admin=%s gomaxprocs=%d\n", o.engine, listenAddr, aln.Addr(), runtime.GOMAXPROCS(0))

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	adm.ready.Store(false)
	stopGRPC(gs, o.grace)
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) && !errors.Is(serveErr, grpc.ErrServerStopped) {
		return serveErr
	}
	return nil
}

// stopGRPC lets open streams finish for up to grace, then cuts them.
func stopGRPC(gs *grpc.Server, grace time.Duration) {
	done := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(grace):
		gs.Stop()
		<-done
	}
}
