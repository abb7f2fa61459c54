// Package engine names the WAF engines wafbench measures. It sits below the
// two packages that speak of engines: driver/builds (the ways each engine is
// built) and driver/modes (the modes that run an engine, in which host), so
// each engine's name is spelled here once.
package engine

// The engines.
const (
	ModSecurity = "modsecurity" // libmodsecurity (C++ module, nginx connector)
	Coraza      = "coraza"      // coraza/v3 (Go module, proxy-wasm filter, Caddy handler)
)

// All lists the engines in report order.
var All = []string{ModSecurity, Coraza}
