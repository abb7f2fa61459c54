package engine

import (
	"runtime/debug"
	"sync"
)

// corazaModule is the module path of the Coraza engine.
const corazaModule = "github.com/corazawaf/coraza/v3"

// Version is the version of CorazaModule linked into the running binary
// (e.g. "v3.8.1"), read from its build information, so a module built with
// another module file (go build -modfile) reports the version it really
// carries. It is "unknown" when the binary has no build information.
var Version = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range bi.Deps {
		if d.Path == corazaModule {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "unknown"
})
