package upstream

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Kind names an upstream server a run can put behind every mode.
type Kind string

// The upstream kinds.
const (
	// Own is this package's server, run as `wafbench upstream`: the
	// default, because it costs far less per request than any net/http
	// server and so is never the bottleneck.
	Own Kind = "wafbench"
	// GoHTTPBin is go-httpbin (the lab's upstream; driver/upstream/httpbin,
	// built by `make modules` into HTTPBinBinaryRel), serving every request
	// with its /anything handler.
	GoHTTPBin Kind = "go-httpbin"
)

// kinds lists the upstream kinds, the default first.
var kinds = []Kind{Own, GoHTTPBin}

// ParseKind resolves an --upstream value; "" is Own.
func ParseKind(s string) (Kind, error) {
	if s == "" {
		return Own, nil
	}
	for _, k := range kinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown upstream %q (want %s or %s)", s, Own, GoHTTPBin)
}

// httpBinBinaryRel is where `make modules` builds go-httpbin, under the
// repository root.
const httpBinBinaryRel = "build/go-httpbin/go-httpbin"

// httpBinModule is the module whose version Version reports for GoHTTPBin.
const httpBinModule = "github.com/mccutchen/go-httpbin/v2"

// binary is the executable of kind k under the repository root: self (the
// wafbench executable) for Own.
func (k Kind) binary(root, self string) string {
	if k == GoHTTPBin {
		return filepath.Join(root, httpBinBinaryRel)
	}
	return self
}

// Check reports a missing executable of kind k, saying how to build it.
func (k Kind) Check(root, self string) error {
	bin := k.binary(root, self)
	if _, err := os.Stat(bin); err != nil {
		if k == GoHTTPBin {
			return fmt.Errorf("upstream %s: %s missing: run 'make modules'", k, bin)
		}
		return fmt.Errorf("upstream %s: %v", k, err)
	}
	return nil
}

// Command is the command line that starts kind k listening on listen
// (port 0: any) and writing the address it got, and a newline, to addrFile.
func (k Kind) Command(root, self, listen, addrFile string) *exec.Cmd {
	if k == GoHTTPBin {
		return exec.Command(k.binary(root, self), "-listen", listen, "-addr-file", addrFile)
	}
	if k == Albedo {
		return exec.Command(self, "upstream", "--albedo", "--listen", listen, "--addr-file", addrFile)
	}
	return exec.Command(self, "upstream", "--listen", listen, "--addr-file", addrFile)
}

// Version describes the upstream for meta.json and reports: "wafbench"
// for Own, "go-httpbin v2.21.0" (the version linked into the executable)
// for GoHTTPBin.
func (k Kind) Version(root, self string) (string, error) {
	if k == Albedo {
		return "albedo v0.3.0 (github.com/coreruleset/albedo, linked into wafbench)", nil
	}
	if k != GoHTTPBin {
		return string(k), nil
	}
	bin := k.binary(root, self)
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", fmt.Errorf("upstream %s: %w", k, err)
	}
	for _, d := range bi.Deps {
		if d.Path == httpBinModule {
			return string(k) + " " + d.Version, nil
		}
	}
	return "", fmt.Errorf("upstream %s: %s does not link %s", k, bin, httpBinModule)
}
