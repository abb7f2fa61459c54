// Command go-httpbin is the lab's upstream, go-httpbin (github.com/mccutchen/
// go-httpbin/v2), as a wafbench upstream: it listens where --listen says
// (port 0: one the kernel picks), writes the address it got to --addr-file
// (the protocol of `wafbench upstream`) and serves until SIGTERM or SIGINT.
//
// Path mapping: every request is served by go-httpbin's /anything handler
// under its own path (/safe → /anything/safe, /get?x=1 → /anything/get?x=1),
// which answers 200 to any method with a JSON echo of the request (its
// arguments, headers, form, JSON body). The workloads' paths (/safe, /json,
// /attack, /search, the lab's /get) are not all go-httpbin endpoints, or not
// for the workload's method (/json is GET only): mapped this way every
// benign workload answers 200, and the requests the WAF sees are the same
// with either upstream. Paths already under /anything are served as they
// are. The body limit is 2 MiB, above the WAF modes' 1 MiB, so a WAF and
// not the upstream decides what is too large.
//
// It counts the connections it accepted and the requests it answered, and
// prints them to stderr when it stops: "go-httpbin: accepted N connections,
// served M requests".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mccutchen/go-httpbin/v2/httpbin"
)

// module is the module path of go-httpbin, whose version -version prints.
const module = "github.com/mccutchen/go-httpbin/v2"

// rewrite maps a request path onto go-httpbin's /anything handler.
func rewrite(path string) string {
	if path == "/anything" || strings.HasPrefix(path, "/anything/") {
		return path
	}
	return "/anything" + path
}

// version is the go-httpbin version linked in, from the build information.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == module {
				return d.Version
			}
		}
	}
	return "unknown"
}

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "host:port to listen on (port 0: any free port)")
	addrFile := flag.String("addr-file", "", "write the address listened on, and a newline, to this file")
	showVersion := flag.Bool("version", false, "print the go-httpbin version and exit")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "go-httpbin: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if *showVersion {
		fmt.Println(version())
		return
	}
	if err := run(*listen, *addrFile); err != nil {
		fmt.Fprintf(os.Stderr, "go-httpbin: %v\n", err)
		os.Exit(1)
	}
}

func run(listen, addrFile string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	var accepted, served atomic.Int64
	hb := httpbin.New(httpbin.WithMaxBodySize(2 << 20))
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served.Add(1)
			r.URL.Path = rewrite(r.URL.Path)
			r.URL.RawPath = ""
			hb.ServeHTTP(w, r)
		}),
	}
	if addrFile != "" {
		// Written whole, then renamed: a reader never sees half a line.
		tmp := addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, addrFile); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(countingListener{ln, &accepted}) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err = srv.Shutdown(sctx)
	}
	fmt.Fprintf(os.Stderr, "go-httpbin: accepted %d connections, served %d requests\n", accepted.Load(), served.Load())
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
