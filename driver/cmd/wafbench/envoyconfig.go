package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"wafbench/driver/envoy"
)

// envoyConfigCmd writes the reference Envoy configuration of every Envoy
// mode (driver/envoy's References) into a directory.
func envoyConfigCmd(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("envoy-config", flag.ContinueOnError)
	out := fs.String("out", inRepo(envoy.ReferenceDir), "directory to write <mode>.yaml into; other .yaml files there are removed")
	fill := fs.Bool("fill", false, "ready to run from this checkout: "+envoy.RepoPlaceholder+" replaced by its absolute path and coraza-wasm's rule files inlined (needs make crs and make modules); default: the placeholder, as envoy/ holds them")
	if err := parse(fs, args, stdout, usageOf("envoy-config")); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("envoy-config: unexpected argument %q (the directory goes in --out)", fs.Arg(0))
	}
	root := ""
	if *fill {
		var err error
		if root, err = envoy.RepoRoot(); err != nil {
			return usagef("envoy-config --fill: %v", err)
		}
	}
	if err := envoy.WriteReferences(*out, root); err != nil {
		return err
	}
	for _, r := range envoy.References {
		fmt.Fprintln(stdout, filepath.Join(*out, r.File))
	}
	return nil
}
