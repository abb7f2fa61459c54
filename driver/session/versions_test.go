package session

import (
	"slices"
	"strings"
	"testing"

	"wafbench/driver/hosts"
)

func TestReleaseNotes(t *testing.T) {
	got := releaseNotes(map[string]hosts.Release{
		"":       {Binary: "/x/envoy", Version: "1.40.0/Clean", SHA256: "aa"},
		"1.40.0": {Binary: "b40", Version: "1.40.0/Clean/RELEASE/BoringSSL 9e55809", SHA256: "bb"},
		"1.9.0":  {Binary: "b9", Version: "1.9.0/Clean", SHA256: "cc"},
		"1.39.3": {Binary: "b39", Version: "1.39.3/Clean", SHA256: "dd"},
	})
	var releases []string
	for _, n := range got {
		v, _, _ := strings.Cut(strings.TrimPrefix(n, "Envoy release "), " ")
		releases = append(releases, v)
	}
	if want := []string{"1.9.0", "1.39.3", "1.40.0"}; !slices.Equal(releases, want) {
		t.Errorf("notes name releases %v, want %v (the run's own Envoy left out): %q", releases, want, got)
	}
	if want := "Envoy release 1.40.0 (modes ~1.40.0): 1.40.0/Clean/RELEASE/BoringSSL 9e55809, SHA-256 bb, b40"; got[2] != want {
		t.Errorf("note = %q, want %q", got[2], want)
	}
}
