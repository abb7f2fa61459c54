package runner

import (
	"wafbench/driver/envoy"
	"wafbench/driver/upstream"
)

// upstreamRoot is the repository root an upstream of kind k is built under
// ("" for upstream.Own, which is the wafbench executable itself).
func upstreamRoot(k upstream.Kind) (string, error) {
	if k == upstream.Own || k == upstream.Albedo || k == "" {
		return "", nil
	}
	return envoy.RepoRoot()
}
