package envoy

import (
	"debug/elf"
	"fmt"
	"slices"
	"strings"
)

// callbackPrefix names the functions Envoy implements for dynamic modules.
const callbackPrefix = "envoy_dynamic_module_callback_"

// Callbacks is the set of dynamic-module callbacks an Envoy binary
// exports (its defined dynamic symbols named envoy_dynamic_module_callback_*).
func Callbacks(binary string) (map[string]bool, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return nil, fmt.Errorf("envoy %s: %w", binary, err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("envoy %s: dynamic symbols: %w", binary, err)
	}
	out := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && strings.HasPrefix(s.Name, callbackPrefix) {
			out[s.Name] = true
		}
	}
	return out, nil
}

// MissingCallbacks lists, sorted, the callbacks module (a dynamic module's
// shared object) imports that exported (Callbacks of an Envoy binary) lacks:
// Envoy opens modules with RTLD_NOW, so a module missing any does not load.
func MissingCallbacks(module string, exported map[string]bool) ([]string, error) {
	f, err := elf.Open(module)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", module, err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("module %s: dynamic symbols: %w", module, err)
	}
	var out []string
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF && strings.HasPrefix(s.Name, callbackPrefix) && !exported[s.Name] {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
