package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"wafbench/driver/builds"
	"wafbench/driver/internal/usage"
	"wafbench/driver/modes"
	"wafbench/driver/profile"
)

// listKinds are what 'wafbench list' can list, in the order it lists them
// all.
var listKinds = []string{"suites", "workloads", "modes", "builds"}

// listCmd prints what a command line can name, one line each with a short
// description: the suites and workloads of --profiles, the modes and the
// engine builds of --builds.
func listCmd(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	suiteName := fs.String("suite", "", "with workloads: list the workloads (workload@conns) this suite runs; empty = every workload of --profiles with the connection counts it lists")
	profilesDir := fs.String("profiles", inRepo("profiles"), "directory of workload/suite YAML files")
	buildsFile := fs.String("builds", inRepo("filters/builds.yaml"), "engine build registry")
	if err := parse(fs, args, stdout, usageOf("list")); err != nil {
		return err
	}
	kinds := listKinds
	if fs.NArg() > 0 {
		// The kind may come before flags: list workloads --suite seed.
		kind, rest := fs.Arg(0), fs.Args()[1:]
		if err := parse(fs, rest, stdout, usageOf("list")); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return usagef("list: unexpected argument %q (want one of %s)", fs.Arg(0), strings.Join(listKinds, ", "))
		}
		if !contains(listKinds, kind) {
			return usagef("list: unknown kind %q (want one of %s)", kind, strings.Join(listKinds, ", "))
		}
		kinds = []string{kind}
	}
	var set *profile.Set
	if contains(kinds, "suites") || contains(kinds, "workloads") {
		var err error
		if set, err = profile.LoadDir(*profilesDir); err != nil {
			return usage.Wrap(err)
		}
	}
	var reg *modes.Registry
	if contains(kinds, "modes") || contains(kinds, "builds") {
		sf := stackFlags{buildsFile: *buildsFile}
		var err error
		if reg, err = sf.registry(); err != nil {
			return err
		}
	}
	var lines [][2]string
	for i, kind := range kinds {
		switch kind {
		case "suites":
			lines = listSuites(set)
		case "workloads":
			var err error
			if lines, err = listWorkloads(set, *suiteName); err != nil {
				return err
			}
		case "modes":
			lines = listModes(reg)
		case "builds":
			lines = listBuilds(reg.Builds())
		}
		if len(kinds) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "%s%s:\n", strings.ToUpper(kind[:1]), kind[1:])
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, l := range lines {
			fmt.Fprintf(tw, "%s\t%s\n", l[0], l[1])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// listSuites describes each suite: its own description, then its design.
func listSuites(set *profile.Set) [][2]string {
	var out [][2]string
	for _, name := range set.SuiteNames() {
		s := set.Suites[name]
		design := fmt.Sprintf("%s × %s, %s windows after %s warmup", plural(len(s.Workloads), "workload"), plural(s.Repeats, "repeat"),
			shortDuration(time.Duration(s.Duration).String()), shortDuration(time.Duration(s.Warmup).String()))
		if len(s.Modes) > 0 {
			design += "; modes " + strings.Join(s.Modes, ",")
		}
		if s.Downstream != "" {
			design += "; over " + s.Downstream
		}
		out = append(out, [2]string{name, design + ": " + shorten(s.Description, 80)})
	}
	return out
}

// listWorkloads describes the workloads of suite (every workload when
// suite is empty): method, path, body.
func listWorkloads(set *profile.Set, suite string) ([][2]string, error) {
	var out [][2]string
	if suite == "" {
		for _, name := range set.WorkloadNames() {
			w := set.Workloads[name]
			out = append(out, [2]string{name, describeWorkload(w) + "; conns " + joinInts(w.Conns)})
		}
		return out, nil
	}
	s, ok := set.Suites[suite]
	if !ok {
		return nil, usagef("--suite: unknown suite %q (known: %s)", suite, strings.Join(set.SuiteNames(), ", "))
	}
	cases, err := set.Cases(s.Workloads)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	for _, c := range cases {
		out = append(out, [2]string{c.Key(), describeWorkload(c.Workload)})
	}
	return out, nil
}

// describeWorkload is a workload's request in a few words.
func describeWorkload(w *profile.Workload) string {
	if w.IsMix() {
		return "a weighted mix of other workloads"
	}
	path := w.Path
	if len(path) > 48 {
		path = path[:45] + "…"
	}
	d := w.Method + " " + path
	if b := w.Body; b != nil {
		switch {
		case b.Size > 0 && b.Shape != "":
			d += fmt.Sprintf(", %s body of %s", b.Shape, byteSize(b.Size))
		case b.Size > 0:
			d += fmt.Sprintf(", body of %s", byteSize(b.Size))
		case b.Literal != "":
			d += fmt.Sprintf(", body of %s", byteSize(len(b.Literal)))
		}
	}
	if w.Generate != nil || len(w.Sweep) > 0 {
		d += ", generated"
	}
	if w.ConnMode != "" {
		d += ", " + w.ConnMode
	}
	return d
}

// byteSize is n bytes as "512 B", "4 KiB" or "1.5 MiB".
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'g', 3, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'g', 3, 64) + " KiB"
	}
	return strconv.Itoa(n) + " B"
}

// plural is "1 repeat", "6 repeats".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// shorten cuts text at a word boundary to at most width runes, marking a
// cut with "…"; "" becomes "(no description)".
func shorten(text string, width int) string {
	if text == "" {
		return "(no description)"
	}
	lines := wrap(text, width-1)
	if len(lines) == 1 {
		return lines[0]
	}
	return strings.TrimRight(lines[0], ",;:") + " …"
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// modeTexts say what each kind of mode runs, by its base name.
var modeTexts = map[string]string{
	modes.Passthrough:         "Envoy with the router only: the baseline every WAF mode is compared with",
	modes.ModSecurity:         "Envoy with the libmodsecurity dynamic module (C++)",
	modes.Coraza:              "Envoy with the coraza/v3 dynamic module (Go)",
	modes.CorazaWasm:          "Envoy with the Coraza engine wrapper as a proxy-wasm filter in V8",
	modes.RefDirect:           "reference: the client talks to the upstream, no proxy",
	modes.RefNginxModSecurity: "reference: nginx with the ModSecurity connector, same CRS",
	modes.RefCaddyCoraza:      "reference: Caddy with the project's coraza/v3 handler, same CRS",
}

// listModes describes every mode name the registry resolves.
func listModes(reg *modes.Registry) [][2]string {
	var out [][2]string
	for _, m := range reg.Known() {
		n, err := modes.Parse(m)
		if err != nil {
			continue // Known lists names Parse accepts
		}
		d := modeTexts[n.Base]
		switch {
		case n.Build != "":
			if b, ok := reg.Builds().Find(n.Engine + "@" + n.Build); ok {
				d += "; build " + n.Build + ": " + describeBuild(b)
			}
		case n.Host == modes.Nginx:
			d += "; Debian's libmodsecurity"
		case n.Host == modes.Envoy && n.Engine != "" && !n.IsWasm():
			if b, ok := reg.Builds().Default(n.Engine); ok {
				d += "; default build: " + describeBuild(b)
			}
		}
		out = append(out, [2]string{m, d})
	}
	return out
}

// listBuilds describes every engine build of the registry.
func listBuilds(set *builds.Set) [][2]string {
	var out [][2]string
	for i := range set.Builds {
		b := &set.Builds[i]
		out = append(out, [2]string{b.Mode(), describeBuild(b)})
	}
	return out
}

// describeBuild is a build's recipe in a few words.
func describeBuild(b *builds.Build) string {
	parts := []string{b.Engine + " " + b.Version + " from " + b.Source.Kind, b.Compiler, b.Link}
	if b.Flags != "" {
		parts = append(parts, b.Flags)
	}
	if b.LTO != "" {
		parts = append(parts, b.LTO+" LTO")
	}
	if b.PGO != nil {
		parts = append(parts, "PGO")
	}
	if len(b.Tags) > 0 {
		parts = append(parts, "tags "+strings.Join(b.Tags, ","))
	}
	if b.Allocator != nil {
		parts = append(parts, "private allocator "+b.Allocator.Package)
	}
	if b.Ctype != "" {
		parts = append(parts, "ctype "+b.Ctype)
	}
	if b.Instrument {
		parts = append(parts, "instrumented: PGO training only")
	}
	if b.Default {
		parts = append(parts, "the engine's default build")
	}
	return strings.Join(parts, ", ")
}
