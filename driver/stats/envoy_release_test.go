package stats

import (
	"slices"
	"testing"
)

// TestPairSpecsEnvoyReleases: the modes of each Envoy release pair among
// themselves (WAF vs the same release's passthrough), and each mode on a
// release pairs with the same mode on the run's Envoy, else on the newest
// release.
func TestPairSpecsEnvoyReleases(t *testing.T) {
	tests := []struct {
		name string
		ms   []string
		want []string // "family: num/den (base)"
	}{
		{"releases only", []string{"passthrough~1.39.3", "passthrough~1.40.0", "coraza~1.39.3", "coraza~1.40.0", "coraza-wasm~1.39.3"}, []string{
			"WAF vs passthrough: coraza~1.39.3/passthrough~1.39.3 (passthrough~1.39.3)",
			"WAF vs passthrough: coraza-wasm~1.39.3/passthrough~1.39.3 (passthrough~1.39.3)",
			"same engine, other host: coraza-wasm~1.39.3/coraza~1.39.3 (passthrough~1.39.3)",
			"WAF vs passthrough: coraza~1.40.0/passthrough~1.40.0 (passthrough~1.40.0)",
			"Envoy release vs release: passthrough~1.39.3/passthrough~1.40.0 ()",
			"Envoy release vs release: coraza~1.39.3/coraza~1.40.0 ()",
		}},
		{"against the run's Envoy", []string{"passthrough", "passthrough~1.39.3", "modsecurity", "coraza"}, []string{
			"WAF vs passthrough: modsecurity/passthrough (passthrough)",
			"WAF vs passthrough: coraza/passthrough (passthrough)",
			"engine vs engine: modsecurity/coraza (passthrough)",
			"Envoy release vs release: passthrough~1.39.3/passthrough ()",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, sp := range pairSpecs(tt.ms) {
				got = append(got, string(sp.family)+": "+sp.num+"/"+sp.den+" ("+sp.base+")")
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("pairSpecs(%v) =\n%q\nwant\n%q", tt.ms, got, tt.want)
			}
		})
	}
}

// TestPairSpecsHostBuilds: a host on an engine build pairs with the Envoy
// module of the same build and rule configuration, and with nothing when
// the run lacks that module.
func TestPairSpecsHostBuilds(t *testing.T) {
	ms := []string{"modsecurity", "modsecurity@3.0.14-pgo", "ref-nginx-modsecurity", "ref-nginx-modsecurity@3.0.14-pgo",
		"ref-nginx-modsecurity@3.0.14-o2", "coraza", "ref-caddy-coraza", "coraza+no-crs", "ref-caddy-coraza+no-crs", "ref-caddy-coraza+pl2"}
	var got []string
	for _, sp := range pairSpecs(ms) {
		if sp.family == familyHosts {
			got = append(got, sp.num+"/"+sp.den)
		}
	}
	want := []string{"ref-nginx-modsecurity/modsecurity", "ref-nginx-modsecurity@3.0.14-pgo/modsecurity@3.0.14-pgo", "ref-caddy-coraza/coraza",
		"ref-caddy-coraza+no-crs/coraza+no-crs"}
	if !slices.Equal(got, want) {
		t.Errorf("same engine, other host pairs of %v =\n%q\nwant\n%q", ms, got, want)
	}
}
