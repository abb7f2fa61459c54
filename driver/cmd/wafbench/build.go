package main

import (
	"context"
	"flag"
	"io"
	"os"

	"wafbench/driver/builds"
	"wafbench/driver/envoy"
	"wafbench/driver/profile"
)

// buildRunner loads the recipes of buildsFile into a runner at the
// repository root.
func buildRunner(buildsFile string, force bool, stderr io.Writer) (*builds.Runner, error) {
	root, err := envoy.RepoRoot()
	if err != nil {
		return nil, usagef("not inside the wafbench repository: %v", err)
	}
	set, err := builds.Load(buildsFile)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return &builds.Runner{Root: root, Set: set, Stderr: stderr, Force: force}, nil
}

func buildCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	list := fs.Bool("list", false, "list the builds and whether each is up to date; build nothing")
	force := fs.Bool("force", false, "rebuild even when a build is up to date")
	buildsFile := fs.String("builds", inRepo("filters/builds.yaml"), "engine build registry")
	if err := parse(fs, args, stdout, usageOf("build")); err != nil {
		return err
	}
	r, err := buildRunner(*buildsFile, *force, stderr)
	if err != nil {
		return err
	}
	chosen, err := r.Set.Pick(fs.Args())
	if err != nil {
		return usagef("build: %v", err)
	}
	if *list {
		return r.List(stdout, chosen)
	}
	return r.BuildAll(ctx, chosen)
}

func pgoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pgo", flag.ContinueOnError)
	buildsFile := fs.String("builds", inRepo("filters/builds.yaml"), "engine build registry")
	profilesDir := fs.String("profiles", inRepo("profiles"), "directory of workload/suite YAML files (the training suites)")
	importDir := fs.String("import", "", "train nothing: install the profiles in this directory (a pgo workflow artifact's pgo/ folder) into build/pgo/, each checked against its build's recipe")
	if err := parse(fs, args, stdout, usageOf("pgo")); err != nil {
		return err
	}
	r, err := buildRunner(*buildsFile, false, stderr)
	if err != nil {
		return err
	}
	if *importDir != "" {
		return r.Import(*importDir, stdout)
	}
	chosen, err := r.Set.Pick(fs.Args())
	if err != nil {
		return usagef("pgo: %v", err)
	}
	profiles, err := profile.LoadDir(*profilesDir)
	if err != nil {
		return usagef("pgo: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return r.TrainAll(ctx, chosen, builds.TrainOptions{Wafbench: self, Cases: profiles.TrainingCases(*profilesDir),
		RunArgs: []string{"--builds", *buildsFile, "--profiles", *profilesDir}})
}
