package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"wafbench/driver/envoy"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
)

// flagGroup is one titled block of a command's --help: the flags of one
// task, in the order they are printed.
type flagGroup struct {
	title string
	names []string
}

// stackGroup is the placement block of every command that starts a host
// (stackFlags).
var stackGroup = flagGroup{"Envoy, modules and CPU placement", []string{"envoy", "module-dir", "crs-dir", "concurrency",
	"envoy-cpus", "client-cpus", "upstream-cpus", "wasm-start-timeout", "extproc-cpus", "extproc-transport", "extproc-failure-mode-allow"}}

// flagGroups are the commands whose --help groups its flags by task; every
// flag a command defines is in exactly one of its groups (TestFlagGroups).
// Commands with a handful of flags print them alphabetically.
var flagGroups = map[string][]flagGroup{
	"run": {
		{"What to run", []string{"suite", "modes", "configs", "waf-config", "envoy-versions", "workloads", "builds", "profiles", "upstream"}},
		{"How long", []string{"repeats", "duration", "warmup", "trial-warmup", "max-requests", "timeout"}},
		{"Load model", []string{"rate", "arrival", "conn-mode"}},
		{"Protocol", []string{"downstream", "streams"}},
		{"Design: mode order and fresh Envoys", []string{"order", "seed", "trial-scope"}},
		{stackGroup.title, append([]string{"allow-shared-cpus"}, stackGroup.names...)},
		{"Profiling", []string{"perf", "perf-diff", "callgrind", "callgrind-warmup", "callgrind-bound", "callgrind-start"}},
		{"CI and pooling: precision, time budget, shards", []string{"precision", "budget", "shard"}},
		{"Max rate (highest rate meeting a latency objective)", []string{"max-rate-at", "max-rate-method", "max-rate-start",
			"max-rate-limit", "max-rate-tolerance", "max-rate-step", "max-rate-votes", "max-rate-window", "max-rate-window-max",
			"max-rate-min-requests"}},
		{"Outputs", []string{"results", "name", "compare", "slo", "matrix", "crs-test", "no-report", "no-protection", "progress"}},
	},
	"serve": {
		{"What to serve", []string{"mode", "builds", "downstream", "log-dir", "crs-test"}},
		stackGroup,
	},
	"load": {
		{"Target and request", []string{"target", "method", "header", "body", "expect", "downstream", "streams", "tls-ca"}},
		{"How long", []string{"duration", "warmup", "max-requests", "timeout"}},
		{"Load model", []string{"conns", "conn-mode", "rate", "arrival", "seed", "pacer"}},
		{"CPU placement", []string{"cpus"}},
		{"Outputs", []string{"json", "hgrm", "fortio-json"}},
	},
	"crs-test": {
		{"What to test", []string{"modes", "builds", "tests", "overrides"}},
		{"Instead of running the suite", []string{"attach", "from", "compare", "rejudge"}},
		{"Time limits", []string{"timeout", "busy-timeout", "marker-wait", "wasm-timeout", "wasm-idle"}},
		stackGroup,
		{"Outputs", []string{"results", "name", "progress"}},
	},
	"matrix": {
		{"What to send", []string{"corpus", "modes", "builds", "upstream"}},
		stackGroup,
		{"Outputs", []string{"out"}},
	},
}

// defaultTexts are the help's defaults where the flag's own default value
// is not what a run uses: the suite decides, or another flag does.
var defaultTexts = map[string]string{
	"run.repeats":      "the suite's",
	"run.duration":     "the suite's",
	"run.warmup":       "the suite's",
	"run.trial-warmup": "the suite's",
	"run.modes":        `"passthrough,modsecurity,coraza", or the suite's own modes if it lists any`,
	"run.conn-mode":    "the suite's, else keepalive",
	"run.downstream":   `"h1", or the suite's if it sets one`,
	"run.streams":      "1, or the suite's if it sets them",
	"run.timeout":      "5s; 2m with --callgrind",
	"run.name":         "the suite's name",
}

// helpExtras add to a flag's description what help looks up when it is
// printed: the suites of the checkout's profiles for run --suite.
var helpExtras = map[string]func() string{
	"run.suite": func() string {
		set, err := profile.LoadDir(inRepo("profiles"))
		if err != nil {
			return ""
		}
		return "; the checkout's profiles have " + strings.Join(set.SuiteNames(), ", ")
	},
}

// modeKinds lists every kind of mode name, spelled by driver/modes.
func modeKinds() string {
	return strings.Join([]string{modes.Passthrough, modes.ModSecurity + "[@<build>]", modes.Coraza + "[@<build>]", modes.CorazaWasm,
		modes.RefDirect, modes.RefNginxModSecurity + "[@<build>]", modes.RefCaddyCoraza}, ", ")
}

// writeHelp writes a command's help: its text up to the "{{flags}}" line
// (or all of it), its flags grouped by task where flagGroups has the
// command, else alphabetically, then the text after that line (the
// Examples). A grouping that misses or repeats a flag is an error.
func writeHelp(w io.Writer, fs *flag.FlagSet, text string) error {
	head, tail, _ := strings.Cut(text, "{{flags}}\n")
	groups, ok := flagGroups[fs.Name()]
	if !ok {
		var all []string
		fs.VisitAll(func(f *flag.Flag) { all = append(all, f.Name) })
		groups = []flagGroup{{"", all}}
	}
	if err := checkGroups(fs, groups); err != nil {
		return fmt.Errorf("help of %s: %w", fs.Name(), err)
	}
	fmt.Fprint(w, head)
	for i, g := range groups {
		if g.title != "" {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%s:\n", g.title)
		}
		for _, name := range g.names {
			writeFlag(w, fs.Name(), fs.Lookup(name))
		}
	}
	if tail != "" {
		fmt.Fprintln(w)
		fmt.Fprint(w, tail)
	}
	return nil
}

// checkGroups reports a flag of fs that is in no group or in more than
// one, and a group's name that fs does not define.
func checkGroups(fs *flag.FlagSet, groups []flagGroup) error {
	seen := map[string]int{}
	for _, g := range groups {
		for _, n := range g.names {
			if fs.Lookup(n) == nil {
				return fmt.Errorf("group %q names --%s, which is not a flag", g.title, n)
			}
			seen[n]++
		}
	}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err == nil && seen[f.Name] != 1 {
			err = fmt.Errorf("--%s is in %d groups, want 1", f.Name, seen[f.Name])
		}
	})
	return err
}

// helpWidth is where flag descriptions wrap.
const helpWidth = 100

// writeFlag writes one flag: "  --name type", then its description,
// wrapped and indented, ending with its default.
func writeFlag(w io.Writer, cmd string, f *flag.Flag) {
	typ, text := flag.UnquoteUsage(f)
	if typ != "" {
		typ = " " + typ
	}
	fmt.Fprintf(w, "  --%s%s\n", f.Name, typ)
	if extra, ok := helpExtras[cmd+"."+f.Name]; ok {
		text += extra()
	}
	if d := defaultText(cmd, f); d != "" {
		text += " (default: " + d + ")"
	}
	for _, line := range wrap(text, helpWidth-8) {
		fmt.Fprintf(w, "        %s\n", line)
	}
}

// defaultText is how help states f's default: a defaultTexts entry, else
// its default value ("" for a zero value, whose meaning the description
// states), a path inside the checkout relative to it.
func defaultText(cmd string, f *flag.Flag) string {
	if d, ok := defaultTexts[cmd+"."+f.Name]; ok {
		return d
	}
	switch f.DefValue {
	case "", "0", "0s", "false", "[]":
		return ""
	}
	if filepath.IsAbs(f.DefValue) {
		if root, err := envoy.RepoRoot(); err == nil {
			if rel, err := filepath.Rel(root, f.DefValue); err == nil && !strings.HasPrefix(rel, "..") {
				return rel + " in the checkout"
			}
		}
	}
	switch typ, _ := flag.UnquoteUsage(f); typ {
	case "string":
		return strconv.Quote(f.DefValue)
	case "duration":
		return shortDuration(f.DefValue)
	}
	return f.DefValue
}

// shortDuration drops a Go duration's zero tail: "3m0s" → "3m", "1h0m0s" → "1h".
func shortDuration(d string) string {
	if strings.HasSuffix(d, "m0s") {
		d = strings.TrimSuffix(d, "0s")
	}
	if strings.HasSuffix(d, "h0m") {
		d = strings.TrimSuffix(d, "0m")
	}
	return d
}

// wrap breaks text into lines of at most width runes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
