//go:build !modsecurity_engine

package waf

import "errors"

// ModSecurityLinked reports whether this binary links the ModSecurity
// engine (build tag modsecurity_engine).
const ModSecurityLinked = false

// openModSecurity refuses: the ModSecurity engine is linked only with the
// build tag modsecurity_engine, which `make -C filters/extproc` sets.
func openModSecurity([]byte, string, bool) (Engine, error) {
	return nil, errors.New("engine modsecurity: this binary was built without it (build tag modsecurity_engine; build with make -C filters/extproc)")
}
