package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"wafbench/driver/cpu"
	"wafbench/driver/downstream"
	"wafbench/driver/hosts"
	"wafbench/driver/hosts/all"
	"wafbench/driver/internal/usage"
	runmeta "wafbench/driver/meta"
	"wafbench/driver/modes"
	"wafbench/driver/upstream"
	"wafbench/internal/crs"
)

// ServeRequest is 'wafbench serve': the upstream and the host of one
// mode, started as a trial starts them, up until ctx is done.
type ServeRequest struct {
	Mode         modes.Mode
	Envoy        EnvoySpec // Envoy.CPUs are the host's; Envoy.Downstream is set by Serve
	UpstreamCPUs []int
	Downstream   downstream.Protocol // checked against the host (hosts.CheckDownstream)
	CRSDir       string              // the engines' CRS export, written if missing
	RepoCRS      string              // the repository's default CRS directory (meta.EnsureCRS)
	LogDir       string              // the host's config and log, created if missing; "" = a temporary directory
	Self         string              // the wafbench executable, which serves the upstream
	// CRSTest serves the host in the crs-test configuration (DetectionOnly,
	// paranoia level 4, CRS's test settings, the marker rule, matches
	// logged) in front of albedo, CRS's test backend, as crs-test runs it:
	// a host any CRS test runner (go-ftw) can be pointed at, with the log
	// it reads printed.
	CRSTest bool
}

// Serve starts req's upstream and host, prints the host's URL to stdout
// and a status line to stderr, and stops both when ctx is done.
func Serve(ctx context.Context, req ServeRequest, stdout, stderr io.Writer) error {
	m, h, spec := req.Mode, all.Of(req.Mode), req.Envoy
	kind := upstream.Own
	if m.Engine != "" {
		man, err := runmeta.EnsureCRS(req.CRSDir, req.RepoCRS)
		if err != nil {
			return err
		}
		if req.CRSTest && man.Conformance == nil { // an export older than the crs-test configuration
			if _, err := crs.Export(req.CRSDir, crs.Options{}); err != nil {
				return fmt.Errorf("export CRS to %s: %w", req.CRSDir, err)
			}
		}
	}
	if req.CRSTest {
		if m.Engine == "" {
			return usage.Errorf("serve --crs-test: mode %s runs no WAF engine", m)
		}
		spec.RulesFile = filepath.Join(req.CRSDir, crs.ConformanceFile)
		spec.MatchLog, spec.InspectResponse = true, true
		kind = upstream.Albedo
	}
	tmp, err := os.MkdirTemp("", "wafbench-serve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := req.LogDir
	if dir == "" {
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("serve: --log-dir: %w", err)
	}
	ds := req.Downstream
	spec.Downstream = ds
	if ds.TLS() {
		cert, err := downstream.WriteCert(filepath.Join(dir, "tls"))
		if err != nil {
			return err
		}
		spec.CertFile, spec.KeyFile = cert.CertFile, cert.KeyFile
	}
	up, err := startUpstreamKind(ctx, kind, req.Self, req.UpstreamCPUs, tmp)
	if err != nil {
		return err
	}
	defer up.Stop()
	p, err := h.Start(ctx, m, spec, hosts.Where{UpstreamAddr: up.Addr, Dir: dir, TmpDir: tmp,
		Tag: "serve-" + strings.ReplaceAll(m.String(), "@", "_")})
	if err != nil {
		return err
	}
	defer p.Stop()
	fmt.Fprintf(stdout, "http://%s\n", p.Addr)
	fmt.Fprintf(stderr, "wafbench: %s; Ctrl-C to stop\n", serving(m.String(), h, p, spec.CPUs, up.Addr))
	if req.CRSTest {
		fmt.Fprintf(stderr, "wafbench: crs-test configuration (%s) in front of albedo; the match log: %s\n", crs.ConformanceFile, p.LogPath)
	}
	if ds != downstream.H1 {
		fmt.Fprintf(stderr, "wafbench: the listener speaks %s (%s)", ds, ds.Label())
		if ds.TLS() {
			fmt.Fprintf(stderr, ", certificate %s", spec.CertFile)
		}
		fmt.Fprintln(stderr)
	}
	<-ctx.Done()
	return nil
}

// serving describes a started host for serve's status line.
func serving(mode string, h hosts.Host, p *hosts.Process, cpus []int, upstreamAddr string) string {
	if !h.Proxy() {
		return fmt.Sprintf("%s mode, %s: requests go to the upstream %s itself", mode, h.ProcessName(), upstreamAddr)
	}
	s := fmt.Sprintf("%s mode, %s pid %d on CPUs %s", mode, h.ProcessName(), p.PID, cpu.Format(cpus))
	if p.Admin != "" {
		s += ", admin http://" + p.Admin
	}
	if sc := p.Sidecar; sc != nil {
		s += fmt.Sprintf(", %s pid %d on CPUs %s (GOMAXPROCS %d)", sc.Name, sc.PID, cpu.Format(sc.CPUs), sc.GoMaxProcs)
	}
	return s + ", upstream " + upstreamAddr
}
