//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/protection"
	"wafbench/driver/result"
	"wafbench/driver/wafconfig"
)

// customConfig writes dir/main.conf: the built-in pl2 configuration
// (exported to build/crs-pl2) followed by extra lines.
func customConfig(t *testing.T, dir string, extra ...string) {
	t.Helper()
	t.Setenv("WAFBENCH_AS_MAIN", "1") // the upstream the run starts is this test binary
	cs, err := wafconfig.Parse([]string{"pl2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := wafconfig.Prepare(inRepo("."), cs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "# wafbench test: PL2 and two rule exclusions\nInclude " + pc.RulesFile + "\n" + strings.Join(extra, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "main.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWafConfigAccepted runs both engines under a configuration of the
// user's own (PL2 with two rule exclusions): every engine loads it in the
// preflight, the trials are measured under mode names qualified with the
// configuration, passthrough runs once, and meta.json hashes the files the
// engines read, the exclusions' main.conf among them.
func TestWafConfigAccepted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pl2-exclusions")
	customConfig(t, dir,
		"SecRuleRemoveById 920350",
		`SecRuleUpdateTargetById 942100 "!ARGS:comment"`)
	results := filepath.Join(t.TempDir(), "results")
	var stdout, stderr, msg bytes.Buffer
	err := run(context.Background(), []string{"run", "--suite", "quick", "--modes", "passthrough,modsecurity,coraza",
		"--waf-config", dir, "--workloads", "headers@1", "--repeats", "1", "--duration", "500ms", "--warmup", "0s",
		"--trial-warmup", "0s", "--matrix", "none", "--crs-test", "none", "--no-report", "--no-protection", "--progress", "never",
		"--results", results}, &stdout, &stderr)
	if got := exitCode(err, &msg); got != 0 {
		t.Fatalf("exit status: got %d, want 0: %s\n%s", got, msg.String(), stderr.String())
	}
	for _, want := range []string{"modsecurity loads configuration pl2-exclusions", "coraza loads configuration pl2-exclusions"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks the preflight line %q:\n%s", want, stderr.String())
		}
	}
	runs, err := filepath.Glob(filepath.Join(results, "*"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("want one run directory, got %v (%v)", runs, err)
	}
	data, err := os.ReadFile(filepath.Join(runs[0], "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta result.Meta
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(meta.Modes, ","), "passthrough,modsecurity+pl2-exclusions,coraza+pl2-exclusions"; got != want {
		t.Errorf("modes: got %s, want %s", got, want)
	}
	if meta.CRS == nil || len(meta.CRS.Configurations) != 1 {
		t.Fatalf("meta.json crs.configurations: got %+v, want one", meta.CRS)
	}
	c := meta.CRS.Configurations[0]
	if c.Name != "pl2-exclusions" || c.Kind != wafconfig.KindDir || c.SHA256 == "" {
		t.Errorf("configuration: got %s %s %q", c.Name, c.Kind, c.SHA256)
	}
	for _, f := range []string{"main.conf"} {
		if c.Files[f] == "" {
			t.Errorf("configuration files lack %s: %v", f, c.Files)
		}
	}
	if len(c.Files) < 40 {
		t.Errorf("configuration hashes %d files, want main.conf and every CRS file it includes", len(c.Files))
	}
	recs, err := os.ReadFile(filepath.Join(runs[0], "raw.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(recs), "\n"); n != 3 {
		t.Errorf("raw.jsonl: got %d records, want 3", n)
	}
}

// TestWafConfigRefused: a configuration an engine refuses stops the run
// before anything is written, exit 2, with one line carrying the engine's
// own message (libmodsecurity names file and line).
func TestWafConfigRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "broken")
	customConfig(t, dir, `SecRule ARGS "@rx foo" "id:1234,phase:2,deny,status:403,nonsuchaction"`)
	for _, tc := range []struct{ mode, want string }{
		{"modsecurity", "File: " + filepath.Join(dir, "main.conf") + ". Line: 3"},
		{"coraza", `invalid action "nonsuchaction"`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results")
			var stdout, stderr, msg bytes.Buffer
			err := run(context.Background(), []string{"run", "--suite", "quick", "--modes", "passthrough," + tc.mode,
				"--configs", "pl1,broken", "--waf-config", dir, "--workloads", "headers@1", "--repeats", "1",
				"--matrix", "none", "--crs-test", "none", "--results", results}, &stdout, &stderr)
			if got := exitCode(err, &msg); got != 2 {
				t.Fatalf("exit status: got %d, want 2 (%s)", got, msg.String())
			}
			line := msg.String()
			if strings.Count(line, "\n") != 1 || !strings.Contains(line, "configuration broken: "+tc.mode+" refuses it") || !strings.Contains(line, tc.want) {
				t.Errorf("got %q, want one line naming the configuration, %s and %q", line, tc.mode, tc.want)
			}
			if _, err := os.Stat(results); !os.IsNotExist(err) {
				t.Errorf("a refused run created %s", results)
			}
		})
	}
}

// TestProtectionDeployed runs coraza under pl1 and pl2 and checks what the
// protection measurement wrote: every selected attack and legitimate
// request answered and counted, intervals around their rates, a WAF that
// stops SQL injection, paranoia level 2 stopping at least what level 1
// stops, and the report's section with one frontier chart.
func TestProtectionDeployed(t *testing.T) {
	t.Setenv("WAFBENCH_AS_MAIN", "1")
	results := filepath.Join(t.TempDir(), "results")
	var stdout, stderr, msg bytes.Buffer
	err := run(context.Background(), []string{"run", "--suite", "quick", "--modes", "passthrough,coraza",
		"--configs", "pl1,pl2", "--workloads", "headers@1", "--repeats", "1", "--duration", "500ms", "--warmup", "0s",
		"--trial-warmup", "0s", "--matrix", "none", "--crs-test", "none", "--progress", "never",
		"--results", results}, &stdout, &stderr)
	if got := exitCode(err, &msg); got != 0 {
		t.Fatalf("exit status: got %d, want 0: %s\n%s", got, msg.String(), stderr.String())
	}
	runs, _ := filepath.Glob(filepath.Join(results, "*"))
	if len(runs) != 1 {
		t.Fatalf("want one run directory, got %v", runs)
	}
	rep, err := protection.Read(runs[0])
	if err != nil || rep == nil {
		t.Fatalf("protection-deployed.json: %v (report %v)\n%s", err, rep, stderr.String())
	}
	if len(rep.Modes) != 2 || rep.Modes[0].Mode != "coraza+pl1" || rep.Modes[1].Mode != "coraza+pl2" {
		t.Fatalf("modes: got %+v, want coraza+pl1 and coraza+pl2", rep.Modes)
	}
	for _, mr := range rep.Modes {
		sel := rep.Selection[mr.Mode]
		if mr.Error != "" || mr.Stopped.N != sel.Sent || sel.Sent == 0 || mr.Refused.N == 0 {
			t.Errorf("%s: error %q, attacks %d of %d selected, legitimate %d", mr.Mode, mr.Error, mr.Stopped.N, sel.Sent, mr.Refused.N)
		}
		for _, r := range []protection.Rate{mr.Stopped, mr.Refused} {
			if !(r.Lo <= r.Rate && r.Rate <= r.Hi) || r.Lo < 0 || r.Hi > 1 {
				t.Errorf("%s: interval [%g, %g] does not hold %g", mr.Mode, r.Lo, r.Hi, r.Rate)
			}
		}
		sqli := false
		for _, c := range mr.StoppedByClass {
			if c.Class == "SQLi" && c.K > 0 {
				sqli = true
			}
		}
		if !sqli {
			t.Errorf("%s: no SQL injection stopped: %+v", mr.Mode, mr.StoppedByClass)
		}
	}
	if p1, p2 := rep.Modes[0].Stopped.K, rep.Modes[1].Stopped.K; p2 < p1 {
		t.Errorf("paranoia level 2 stopped %d attacks, fewer than level 1's %d", p2, p1)
	}
	md, err := os.ReadFile(filepath.Join(runs[0], "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Protection as deployed", "charts/frontier-coraza.svg"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(runs[0], "charts", "frontier-coraza.svg")); err != nil {
		t.Error(err)
	}
}
