package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"wafbench/driver/builds"
)

// importProfiles is 'wafbench pgo --import DIR': profiles trained
// elsewhere (the pgo workflow) installed into build/pgo/ after the checks of
// builds.ImportProfiles. A directory that is missing, holds no profile or
// holds one that does not fit is bad input.
func importProfiles(env *buildEnv, dir string, stdout io.Writer) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("pgo --import: %s is not a directory", dir)
	}
	got, err := env.set.ImportProfiles(env.root, dir)
	for _, p := range got {
		line := fmt.Sprintf("%s: %s imported (trained on %s by suite %s, %s %s, created %s)", p.Build, p.Profile,
			p.Info.TrainedOn, p.Info.Training, p.Info.Engine, p.Info.SourceVersion, p.Info.CreatedUTC)
		if p.OtherCommit {
			line += fmt.Sprintf("; trained at commit %.12s, not this checkout's: code changed since then gains less from it", p.Info.GitSHA)
		}
		fmt.Fprintln(stdout, line)
	}
	if errors.Is(err, builds.ErrNoProfiles) || errors.Is(err, builds.ErrProfileMisfit) {
		return usagef("%v", err)
	}
	return err
}
