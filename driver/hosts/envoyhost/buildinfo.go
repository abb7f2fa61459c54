package envoyhost

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
)

// corazaVersion reads the version of github.com/corazawaf/coraza/v3 from
// the Go build information embedded in a module (the c-shared library or
// the .wasm); an error when the file has none or does not link coraza.
func corazaVersion(path string) (string, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil && strings.HasSuffix(path, ".wasm") {
		bi, err = wasmBuildInfo(path)
	}
	if err != nil {
		return "", fmt.Errorf("Go build information of %s: %w", path, err)
	}
	for _, d := range bi.Deps {
		if d.Path == corazaModule {
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("%s does not link %s", path, corazaModule)
}

// The sentinels the Go linker puts around a binary's module information
// (cmd/go/internal/modload's infoStart and infoEnd).
var (
	modInfoStart = []byte("0w\xaf\x0c\x92t\x08\x02A\xe1\xc1\x07\xe6\xd6\x18\xe6")
	modInfoEnd   = []byte("\xf92C1\x86\x18 r\x00\x82B\x10A\x16\xd8\xf2")
)

// wasmBuildInfo reads the module information of a Go wasm binary.
// debug/buildinfo knows ELF, PE, Mach-O, XCOFF and Plan 9 files but not
// WebAssembly, where the linker stores the same text between the same
// sentinels in a data segment; that text is what debug.ParseBuildInfo
// parses.
func wasmBuildInfo(path string) (*debug.BuildInfo, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	i := bytes.Index(b, modInfoStart)
	if i < 0 {
		return nil, errors.New("no Go module information in the .wasm")
	}
	b = b[i+len(modInfoStart):]
	j := bytes.Index(b, modInfoEnd)
	if j < 0 {
		return nil, errors.New("unterminated Go module information in the .wasm")
	}
	return debug.ParseBuildInfo(string(b[:j]))
}

const corazaModule = "github.com/corazawaf/coraza/v3"
