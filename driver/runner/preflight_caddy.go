package runner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"wafbench/driver/internal/host"
	"wafbench/driver/modes"
	"wafbench/driver/refhost"
	"wafbench/envoy"
)

// preflightCaddy proves what the Caddy reference host runs, before the
// canaries: the process is the Caddy executable `make modules` built; its
// handler's self-report names engine coraza, build m and rules loaded, with
// the coraza/v3 version linked into that executable; and it runs with the
// GOMAXPROCS it was started with (Envoy's --concurrency). It fills pf's
// Module, ModulePath (the executable), ModuleSHA256 and GOMAXPROCS.
func preflightCaddy(ctx context.Context, m modes.Mode, p *proxy, pf *Preflight) error {
	want, err := refhost.CaddyBinary()
	if err != nil {
		return err
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.pid))
	if err != nil {
		return fmt.Errorf("caddy pid %d: %w", p.pid, err)
	}
	if exe != want {
		return fmt.Errorf("pid %d runs %s, not %s", p.pid, exe, want)
	}
	pf.ModulePath = exe
	if pf.ModuleSHA256, err = host.FileSHA256(exe); err != nil {
		return err
	}
	info, err := readModuleInfo(p.logPath)
	if err != nil {
		return err
	}
	pf.Module = info
	linked := refhost.CaddyEngineVersion()
	switch {
	case info.Engine != m.Engine:
		return fmt.Errorf("the Caddy handler reports engine %q, not %s", info.Engine, m.Engine)
	case info.Build != m.String():
		return fmt.Errorf("the Caddy handler reports build %q, not %s — rebuild it ('make modules')", info.Build, m)
	case info.Rules <= 0:
		return fmt.Errorf("the Caddy handler reports %d rules loaded", info.Rules)
	case linked == "" || strings.TrimPrefix(info.EngineVersion, "v") != strings.TrimPrefix(linked, "v"):
		return fmt.Errorf("the Caddy handler reports %s %q, but %s links %q", m.Engine, info.EngineVersion, exe, linked)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b, err := p.stats(sctx)
	if err != nil {
		return fmt.Errorf("caddy counters %s: %w", refhost.CaddyCountersPath, err)
	}
	st, err := envoy.ParseStats(b)
	if err != nil {
		return err
	}
	got, ok := st[refhost.CaddyGOMAXPROCSStat]
	switch {
	case !ok:
		return fmt.Errorf("caddy counters lack %s — not this wafbench's handler?", refhost.CaddyGOMAXPROCSStat)
	case int(got) != p.gomaxprocs:
		return fmt.Errorf("caddy runs with GOMAXPROCS %d, want %d (--concurrency)", got, p.gomaxprocs)
	}
	pf.GOMAXPROCS = int(got)
	return nil
}
