package meta

import (
	"wafbench/driver/internal/host"
	"wafbench/driver/modes"
	"wafbench/driver/refhost"
	"wafbench/driver/result"
)

// describeCaddy records the Caddy reference host: its executable (built by
// `make modules` from filters/caddy-coraza), its hash, and the Caddy and
// coraza/v3 versions linked into it. A missing executable is a *ModuleError.
func describeCaddy(m modes.Mode) (result.Module, error) {
	bin, err := refhost.CaddyBinary()
	if err != nil {
		return result.Module{}, &ModuleError{Mode: m.String(), Err: err}
	}
	sum, err := host.FileSHA256(bin)
	if err != nil {
		return result.Module{}, &ModuleError{Mode: m.String(), Err: err}
	}
	return result.Module{Path: bin, SHA256: sum, Engine: m.Engine, EngineVersion: refhost.CaddyEngineVersion(),
		Build: refhost.Version(m.String()) + "; GOMAXPROCS = --concurrency"}, nil
}
