package main

import (
	"debug/buildinfo"
	"strings"
)

// goModuleInfo reads the coraza version and the Go build settings embedded
// in the c-shared module.
func goModuleInfo(path string) (version, build string) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "unknown", "unknown (" + err.Error() + ")"
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/corazawaf/coraza/v3" {
			version = d.Version
		}
	}
	parts := []string{bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "-buildmode", "-compiler", "-trimpath", "-ldflags", "-gcflags", "CGO_ENABLED", "CGO_CFLAGS", "GOAMD64", "-pgo":
			parts = append(parts, s.Key+"="+s.Value)
		}
	}
	return version, strings.Join(parts, " ")
}
