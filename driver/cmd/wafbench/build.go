package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"wafbench/driver/builds"
	"wafbench/driver/profile"
	"wafbench/envoy"
)

const buildUsage = `Usage: wafbench build [--list] [--force] [NAME...]

Builds engine recipes of filters/builds.yaml into build/engines/<engine>[-<name>]/
(module, manifest.json written last). NAME is a mode name (modsecurity,
modsecurity@3.0.14-lto, coraza@re2, ...). Without NAME: every build that is not
instrumented and, for pgo builds, whose profile exists ('make pgo' trains them).
An unchanged recipe whose module is intact is not rebuilt.

Flags:
`

const pgoUsage = `Usage: wafbench pgo [NAME...]

The PGO loop for each pgo build (default: all of them): build the instrumented
build it names (modsecurity) and run its training suite through Envoy with
LLVM_PROFILE_FILE set, check every training workload passed, merge the profile
into build/pgo/, then build the optimised build. Coraza builds get their Go CPU
profile from scripts/engines/coraza.sh (WB_ACTION=profile).

Flags:
`

// buildEnv is what build and pgo share: the repository root and the recipes.
type buildEnv struct {
	root   string
	set    *builds.Set
	runner *builds.Runner
}

func loadBuildEnv(buildsFile string, force bool, stderr io.Writer) (*buildEnv, error) {
	root, err := envoy.RepoRoot()
	if err != nil {
		return nil, usagef("not inside the wafbench repository: %v", err)
	}
	set, err := builds.Load(buildsFile)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return &buildEnv{root: root, set: set, runner: &builds.Runner{Root: root, Set: set, Stderr: stderr, Force: force}}, nil
}

func buildCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the builds and whether each is up to date; build nothing")
	force := fs.Bool("force", false, "rebuild even when a build is up to date")
	buildsFile := fs.String("builds", inRepo("filters/builds.yaml"), "engine build registry")
	if err := parse(fs, args, stdout, buildUsage); err != nil {
		return err
	}
	env, err := loadBuildEnv(*buildsFile, *force, stderr)
	if err != nil {
		return err
	}
	chosen, err := env.set.Pick(fs.Args())
	if err != nil {
		return usagef("build: %v", err)
	}
	if *list {
		return env.list(stdout, chosen)
	}
	if len(chosen) == 0 {
		var skipped []builds.Skipped
		chosen, skipped = env.set.Buildable(env.root)
		for _, sk := range skipped {
			fmt.Fprintf(stderr, "%s: skipped: %v\n", sk.Build.Mode(), sk.Err)
		}
	}
	var failed []string
	for _, b := range chosen {
		if _, _, err := env.runner.Build(ctx, b); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(stderr, "wafbench build: %v\n", err)
			failed = append(failed, b.Mode())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("build: %d of %d builds failed: %s", len(failed), len(chosen), strings.Join(failed, ", "))
	}
	return nil
}

// list prints one line per build: mode, directory, state.
func (e *buildEnv) list(stdout io.Writer, chosen []*builds.Build) error {
	if len(chosen) == 0 {
		for i := range e.set.Builds {
			chosen = append(chosen, &e.set.Builds[i])
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUILD\tDIRECTORY\tSTATE")
	for _, b := range chosen {
		st, err := e.runner.Check(b)
		if err != nil {
			return err
		}
		state := st.Reason
		if st.ProfileErr != nil {
			state = "no usable profile (make pgo)"
		}
		if b.Instrument {
			state += " [instrumented: training only]"
		}
		d, _ := filepath.Rel(e.root, b.Dir(e.root))
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Mode(), d, state)
	}
	return tw.Flush()
}

func pgoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pgo", flag.ContinueOnError)
	buildsFile := fs.String("builds", inRepo("filters/builds.yaml"), "engine build registry")
	profilesDir := fs.String("profiles", inRepo("profiles"), "directory of workload/suite YAML files (the training suites)")
	importDir := fs.String("import", "", "train nothing: install the profiles in this directory (a pgo workflow artifact's pgo/ folder) into build/pgo/, each checked against its build's recipe")
	if err := parse(fs, args, stdout, pgoUsage); err != nil {
		return err
	}
	env, err := loadBuildEnv(*buildsFile, false, stderr)
	if err != nil {
		return err
	}
	if *importDir != "" {
		return importProfiles(env, *importDir, stdout)
	}
	chosen, err := env.set.Pick(fs.Args())
	if err != nil {
		return usagef("pgo: %v", err)
	}
	if len(chosen) == 0 {
		chosen = env.set.PGOBuilds()
	}
	profiles, err := profile.LoadDir(*profilesDir)
	if err != nil {
		return usagef("pgo: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var failed []string
	for _, b := range chosen {
		if b.PGO == nil {
			return usagef("pgo: build %s has no pgo field", b.Mode())
		}
		suite, ok := profiles.Suites[b.PGO.Training]
		if !ok {
			return usagef("pgo: build %s: training suite %q not in %s (suites: %s)", b.Mode(), b.PGO.Training, *profilesDir, strings.Join(profiles.SuiteNames(), ", "))
		}
		cases, err := profiles.Cases(suite.Workloads)
		if err != nil {
			return usagef("pgo: suite %s: %v", b.PGO.Training, err)
		}
		keys := make([]string, len(cases))
		for i, c := range cases {
			keys[i] = c.Key()
		}
		tr := &builds.Trainer{Runner: env.runner, Wafbench: self, Cases: keys,
			RunArgs: []string{"--builds", *buildsFile, "--profiles", *profilesDir}}
		_, err = tr.Train(ctx, b)
		if err == nil {
			_, _, err = env.runner.Build(ctx, b)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(stderr, "wafbench pgo: %v\n", err)
			failed = append(failed, b.Mode())
			if !errors.Is(err, builds.ErrTraining) && !errors.Is(err, builds.ErrBuild) {
				return err
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("pgo: %d of %d pgo builds failed: %s", len(failed), len(chosen), strings.Join(failed, ", "))
	}
	return nil
}
