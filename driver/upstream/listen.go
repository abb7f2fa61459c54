package upstream

import (
	"context"
	"fmt"
	"io"
	"net"

	"wafbench/driver/internal/usage"
	"wafbench/internal/atomicfile"
)

// ListenAndServe is 'wafbench upstream': it listens on listen, announces
// the bound address as a line written to addrFile (to announce when
// addrFile is empty) and serves, CRS's albedo backend when albedo is set,
// until ctx is done, which is not an error. A bad listen address is bad
// input (driver/internal/usage).
func ListenAndServe(ctx context.Context, listen, addrFile string, albedo bool, announce io.Writer) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return usage.Errorf("upstream: --listen: %v", err)
	}
	addr := ln.Addr().String() + "\n"
	if addrFile != "" {
		if err := atomicfile.WriteFile(addrFile, []byte(addr)); err != nil {
			return err
		}
	} else {
		fmt.Fprint(announce, addr)
	}
	if albedo {
		err = serveAlbedo(ctx, ln)
	} else {
		err = Serve(ctx, ln)
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}
