package session

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"wafbench/driver/internal/usage"
	"wafbench/driver/modes"
	"wafbench/driver/result"
	"wafbench/driver/runner"
	"wafbench/driver/wafconfig"
)

// expandConfigs is the configuration axis applied to ms: with no
// configuration, ms itself; otherwise every WAF mode once per configuration,
// qualified "+<configuration>", and every mode without an engine once.
func expandConfigs(ms []modes.Mode, cs []wafconfig.Config) []modes.Mode {
	if len(cs) == 0 {
		return ms
	}
	var out []modes.Mode
	for _, m := range ms {
		if m.Engine == "" {
			out = append(out, m)
			continue
		}
		for _, c := range cs {
			q := m
			q.Name = m.Name.WithConfig(c.Name)
			out = append(out, q)
		}
	}
	return out
}

// prepareConfigs exports the built-in configurations (build/crs-<name>/),
// hashes every configuration and points each qualified mode at its entry
// file. It writes only build outputs.
func (p *Plan) prepareConfigs() error {
	if len(p.configs) == 0 {
		return nil
	}
	byName := map[string]*wafconfig.Prepared{}
	for _, c := range p.configs {
		pc, err := wafconfig.Prepare(p.RepoDir, c)
		if err != nil {
			return usage.Errorf("--configs: %v", err)
		}
		byName[c.Name] = pc
		p.prepared = append(p.prepared, pc)
	}
	for i, m := range p.modeSpecs {
		if m.Config != "" {
			p.modeSpecs[i].RulesFile = byName[m.Config].RulesFile
		}
	}
	return nil
}

// recordConfigs describes the prepared configurations in meta.json.
func (p *Plan) recordConfigs(meta *result.Meta) {
	if len(p.prepared) == 0 || meta.CRS == nil {
		return
	}
	for _, pc := range p.prepared {
		dir := filepath.Dir(pc.RulesFile)
		if r, err := filepath.Rel(p.RepoDir, dir); err == nil && !strings.HasPrefix(r, "..") {
			dir = filepath.ToSlash(r)
		}
		meta.CRS.Configurations = append(meta.CRS.Configurations, result.Configuration{
			Name: pc.Name, Kind: pc.Kind, CRSVersion: pc.CRSVersion, ParanoiaLevel: pc.ParanoiaLevel,
			Dir: dir, SHA256: pc.SHA256, Files: pc.Files})
	}
}

// preflightConfigs starts every configuration-qualified WAF mode once, as a
// trial starts it (a fresh Envoy or reference host loading the mode's
// configuration, then the trial preflight: a canary attack denied, a
// benign request passed, the counters moved), before any trial and before
// the run directory exists. A configuration an engine refuses is bad input:
// the error carries the engine's own line about it.
func (p *Plan) preflightConfigs(ctx context.Context, m *machine, stderr io.Writer) error {
	if len(p.configs) == 0 {
		return nil
	}
	tmp, err := os.MkdirTemp("", "wafbench-configs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cfg := p.runnerConfig(tmp, m, io.Discard)
	cfg.Progress, cfg.Log = nil, io.Discard
	s, err := runner.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, md := range p.modeSpecs {
		if md.Config == "" {
			continue
		}
		h, err := s.Start(ctx, md.String(), "configs")
		if err != nil {
			if line := engineError(tmp); line != "" {
				return usage.Errorf("configuration %s: %s refuses it: %s", md.Config, md.WithConfig(""), line)
			}
			return usage.Errorf("configuration %s: %v", md.Config, err)
		}
		h.Stop()
		fmt.Fprintf(stderr, "wafbench: preflight: %s loads configuration %s\n", md.WithConfig(""), md.Config)
	}
	return nil
}

// engineLineRE finds the modules' own error about their rules in an Envoy
// log line ("[error][dynamic_modules] [:] wafbench_modsecurity: cannot load
// rules: …", "… wafbench_coraza filter …: engine: load rules …") or in a
// reference host's log; group 1 is the message without Envoy's prefix.
var engineLineRE = regexp.MustCompile(`\[(?:error|critical|emerg)\].*?((?:wafbench_\w+|ModSecurity|modsecurity|coraza)\b.*\brules\b.*)$`)

// engineError is the engine's own message about the rules, from the first
// log under dir that has one, or "".
func engineError(dir string) string {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
	for _, l := range append(logs, more...) {
		f, err := os.Open(l)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if m := engineLineRE.FindStringSubmatch(sc.Text()); m != nil {
				f.Close()
				return strings.TrimSpace(m[1])
			}
		}
		f.Close()
	}
	return ""
}
