package upstream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	albedo "github.com/coreruleset/albedo/server"
)

// Albedo is CRS's own test backend (github.com/coreruleset/albedo v0.3.0,
// run as `wafbench upstream --albedo`): it answers 200 to any request and,
// on POST /reflect, the status, headers and body the request's JSON asks
// for, so the response-phase tests of the CRS regression suite
// (wafbench crs-test) get the response they test. It is not a benchmark
// upstream (not in Kinds).
const Albedo Kind = "albedo"

// serveAlbedo serves albedo's handler on ln until ctx ends.
func serveAlbedo(ctx context.Context, ln net.Listener) error {
	// albedo logs every request through slog's default logger: off, as
	// the benchmark upstream logs nothing either.
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := &http.Server{Handler: albedo.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
