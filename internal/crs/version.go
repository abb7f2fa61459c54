package crs

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"runtime/debug"
	"strings"

	coreruleset "github.com/corazawaf/coraza-coreruleset/v4"
)

// sourceModule is the Go module the rule files are embedded in.
const sourceModule = "github.com/corazawaf/coraza-coreruleset/v4"

// signatureRE finds CRS's own statement of its release in
// REQUEST-901-INITIALIZATION.conf: SecComponentSignature "OWASP_CRS/4.25.0".
var signatureRE = regexp.MustCompile(`(?m)^SecComponentSignature\s+"OWASP_CRS/([0-9][0-9A-Za-z.\-]*)"`)

// embeddedVersion is the CRS release the embedded rule files state about
// themselves (their SecComponentSignature).
func embeddedVersion() (string, error) {
	b, err := fs.ReadFile(coreruleset.FS, embeddedCRS+"/REQUEST-901-INITIALIZATION.conf")
	if err != nil {
		return "", fmt.Errorf("crs: read the embedded REQUEST-901-INITIALIZATION.conf: %w", err)
	}
	m := signatureRE.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("crs: the embedded REQUEST-901-INITIALIZATION.conf has no SecComponentSignature \"OWASP_CRS/…\"")
	}
	return string(m[1]), nil
}

// errNoDependencyInfo is LinkedModuleVersion's error in a program whose
// build information lists no dependencies: `go test` binaries carry none.
var errNoDependencyInfo = errors.New("crs: this program's build information lists no dependencies")

// linkedModuleVersion is the version of coraza-coreruleset this program
// was built with, from its Go build information.
func linkedModuleVersion() (string, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok || len(bi.Deps) == 0 {
		return "", errNoDependencyInfo
	}
	for _, d := range bi.Deps {
		if d.Path == sourceModule {
			if d.Replace != nil {
				d = d.Replace
			}
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("crs: %s is not among this program's dependencies", sourceModule)
}

// CheckVersion proves that Version and Source describe the rule files this
// program really embeds: the linked coraza-coreruleset module's version
// and the rules' own SecComponentSignature must both be Version. Export
// refuses to write rules that fail it. A program without dependency
// information (a test binary) is checked on the signature alone.
func CheckVersion() error {
	sig, err := embeddedVersion()
	if err != nil {
		return err
	}
	mod, err := linkedModuleVersion()
	if errors.Is(err, errNoDependencyInfo) {
		mod, err = "v"+version, nil // nothing to compare the module against
	}
	if err != nil {
		return err
	}
	return checkVersion(version, source, sig, mod)
}

// checkVersion compares the recorded release (constant, source) with what
// the rules state (signature) and the module linked (module, "v4.25.0").
func checkVersion(constant, source, signature, module string) error {
	if signature != constant {
		return fmt.Errorf("crs: the embedded rules say OWASP_CRS/%s, but crs.Version says %s: update internal/crs", signature, constant)
	}
	if strings.TrimPrefix(module, "v") != constant {
		return fmt.Errorf("crs: %s %s is linked, but crs.Version says %s: update internal/crs", sourceModule, module, constant)
	}
	if want := sourceModule + "@" + module; source != want {
		return fmt.Errorf("crs: crs.Source says %s, but %s is linked: update internal/crs", source, want)
	}
	return nil
}
