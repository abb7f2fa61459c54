package main

import (
	"flag"

	"wafbench/driver/upstream"
	"wafbench/envoy"
)

// upstreamFlag is run's --upstream: which server sits behind every mode.
type upstreamFlag struct{ name string }

func (u *upstreamFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&u.name, "upstream", string(upstream.Own), "upstream server behind every mode: wafbench (the harness's own, cheapest per request) or go-httpbin (the lab's upstream, v2.21.0; every path served by its /anything handler; built by 'make modules')")
}

// resolve checks the kind and its executable and describes it for
// meta.json; an unknown kind or a missing executable is bad input.
func (u *upstreamFlag) resolve(self string) (upstream.Kind, string, error) {
	k, err := upstream.ParseKind(u.name)
	if err != nil {
		return "", "", usagef("--upstream: %v", err)
	}
	root := ""
	if k != upstream.Own {
		if root, err = envoy.RepoRoot(); err != nil {
			return "", "", usagef("--upstream %s: %v", k, err)
		}
	}
	if err := k.Check(root, self); err != nil {
		return "", "", usagef("--upstream: %v", err)
	}
	v, err := k.Version(root, self)
	if err != nil {
		return "", "", usagef("--upstream: %v", err)
	}
	return k, v, nil
}
