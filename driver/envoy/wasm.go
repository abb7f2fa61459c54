package envoy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	wasmfilter "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/wasm/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	wasmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/wasm/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"wafbench/internal/rulefiles"
)

// Names of the coraza-wasm filter in the bootstrap.
const (
	// WasmFilterName is the HTTP filter name of Envoy's Wasm filter.
	wasmFilterName = "envoy.filters.http.wasm"
	// WasmRuntime is the Wasm runtime coraza-wasm runs in (the official
	// Envoy build has V8 only).
	wasmRuntime = "envoy.wasm.runtime.v8"
	// WasmPluginName is the plugin's name; Envoy's "Plugin … failed to load"
	// errors and the wasm log lines name it.
	WasmPluginName = "wafbench_coraza"
	// WasmVMID is the vm_id: every plugin with this id and the same code
	// shares one VM per worker.
	wasmVMID = "wafbench_coraza"
)

// wasmOptions are the VM options of the coraza-wasm filter that bear on
// start-up. The zero value is the benchmark default.
type wasmOptions struct {
	// AllowPrecompiled lets V8 use machine code stored in the module's
	// custom section, when the module carries one (a standard Go build
	// does not: Envoy then compiles the bytecode as usual).
	AllowPrecompiled bool
	// Env is passed to the VM as WASI environment variables (key → value),
	// e.g. WAFBENCH_STAGE_TIMERS or GOGC.
	Env map[string]string
}

// wasmPluginConfig is the plugin configuration of the coraza-wasm filter:
// the native module's filter_config plus every rule file, by absolute path,
// since a Wasm VM has no file system.
type wasmPluginConfig struct {
	moduleFilterConfig
	Files rulefiles.Bundle `json:"files"`
}

// makeWasmFilter is the envoy.filters.http.wasm filter running the
// coraza-wasm module file with the rules rooted at rules (absolute).
func makeWasmFilter(c Config, rules string) (*hcm.HttpFilter, error) {
	files := rulefiles.Bundle{} // a reference configuration inlines no rule files
	if !c.reference {
		var err error
		if files, err = rulefiles.ReadBundle(rules); err != nil {
			return nil, fmt.Errorf("mode %s: rule files: %w", c.Mode, err)
		}
	}
	js, err := json.Marshal(wasmPluginConfig{
		moduleFilterConfig: moduleFilterConfig{RulesFile: rules, InspectResponse: c.InspectResponse, MaxBodyBytes: c.MaxBodyBytes,
			MatchLog: c.MatchLog},
		Files: files,
	})
	if err != nil {
		return nil, err
	}
	pc, err := anypb.New(wrapperspb.String(string(js)))
	if err != nil {
		return nil, err
	}
	code := filepath.Join(c.ModuleSearchPath, c.Mode.ModuleFile())
	if abs, err := filepath.Abs(code); err == nil && !c.reference {
		code = abs
	}
	vm := &wasmv3.VmConfig{
		VmId:    wasmVMID,
		Runtime: wasmRuntime,
		Code: &core.AsyncDataSource{Specifier: &core.AsyncDataSource_Local{Local: &core.DataSource{
			Specifier: &core.DataSource_Filename{Filename: code},
		}}},
		AllowPrecompiled: c.Wasm.AllowPrecompiled,
	}
	if len(c.Wasm.Env) > 0 {
		vm.EnvironmentVariables = &wasmv3.EnvironmentVariables{KeyValues: c.Wasm.Env}
	}
	f, err := anypb.New(&wasmfilter.Wasm{Config: &wasmv3.PluginConfig{
		Name:          WasmPluginName,
		Vm:            &wasmv3.PluginConfig_VmConfig{VmConfig: vm},
		Configuration: pc,
		// A VM that fails at run time answers 503 rather than letting
		// requests through uninspected (the filter itself answers 500 for
		// an engine error it catches).
		FailurePolicy: wasmv3.FailurePolicy_FAIL_CLOSED,
		// Pause from the headers callback holds the headers (StopIteration)
		// while the body still reaches the plugin, as the native module's
		// StopIteration does. Without it Envoy stops all iteration and the
		// plugin never sees the body it waits for.
		AllowOnHeadersStopIteration: wrapperspb.Bool(true),
	}})
	if err != nil {
		return nil, err
	}
	return &hcm.HttpFilter{Name: wasmFilterName, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: f}}, nil
}

// wasmLoadFailure returns one line saying why a Wasm plugin failed to load,
// quoting Envoy's log at logPath: "Plugin wafbench_coraza failed to load:
// <the VM's reasons and the plugin's own error>", or "" when the log has no
// such failure.
func wasmLoadFailure(logPath string) string {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return ""
	}
	var failed string
	var reasons []string
	for _, l := range strings.Split(string(b), "\n") {
		msg := logMessage(l)
		switch {
		case strings.HasPrefix(msg, "Wasm VM failed "):
			reasons = appendNew(reasons, strings.TrimPrefix(msg, "Wasm VM failed "))
		case strings.HasPrefix(msg, "wasm log ") && (strings.Contains(l, "[critical]") || strings.Contains(l, "[error]")):
			// The plugin's own error: "wasm log <plugin>: <message>".
			if _, m, ok := strings.Cut(msg, ": "); ok {
				reasons = appendNew(reasons, m)
			}
		case strings.HasPrefix(msg, "Plugin ") && strings.HasSuffix(msg, " failed to load") && failed == "":
			if !strings.HasPrefix(msg, "Plugin configured to fail closed") {
				failed = msg
			}
		}
	}
	if failed == "" {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(logMessage(l), "Plugin configured to fail closed failed to load") {
				failed = "Plugin " + WasmPluginName + " failed to load"
			}
		}
	}
	if failed == "" {
		return ""
	}
	if len(reasons) == 0 {
		return failed
	}
	return failed + ": " + strings.Join(reasons, "; ")
}

// logMessage is the message of an Envoy log line: what follows the
// "[file:line] " part of "[time][tid][level][logger] [file:line] message".
func logMessage(l string) string {
	if i := strings.Index(l, "] "); i >= 0 {
		rest := l[i+2:]
		if strings.HasPrefix(rest, "[") {
			if j := strings.Index(rest, "] "); j >= 0 {
				return strings.TrimSpace(rest[j+2:])
			}
		}
	}
	return strings.TrimSpace(l)
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// wasmBodyBufferLimit is the virtual host's request_body_buffer_limit in
// the coraza-wasm mode: twice the plugin's body limit plus 2 MiB, so that the
// plugin, not Envoy's buffer overflow, answers an over-limit body with 413,
// as the native module does (it raises its stream's buffer limit). Envoy's
// Wasm filter adds each chunk to the buffer before the plugin sees it, so
// the buffer must hold what the plugin accepted (at most the body limit)
// plus one more read (bounded by the connection's 1 MiB read limit, which
// stays Envoy's default). nil (the connection limit) in every other mode.
func wasmBodyBufferLimit(c Config) *wrapperspb.UInt64Value {
	if c.Mode != CorazaWasm {
		return nil
	}
	body := c.MaxBodyBytes
	if body <= 0 {
		body = 1 << 20 // the engine's default (engine.DefaultMaxBodyBytes)
	}
	return wrapperspb.UInt64(uint64(2*body + 2<<20))
}
