//go:build wafbench_re2

package engine

import wasilibs "github.com/corazawaf/coraza-wasilibs"

// The re2 build (filters/coraza/builds/re2.mod, tag wafbench_re2) replaces
// Coraza's @rx operator, which runs Go's regexp, with coraza-wasilibs' RE2
// one. go-re2 v1.13.0, required explicitly in re2.mod, is RE2 translated to
// plain Go (no cgo, no WebAssembly runtime). Only @rx is replaced: the
// engine's time goes to @rx (its CPU profiles show it), and the package's @pm and
// @detectXSS run in a WebAssembly runtime.
func init() { wasilibs.RegisterRX() }

// regexBackend names the @rx implementation compiled in.
const regexBackend = "re2"
