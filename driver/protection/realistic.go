package protection

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"wafbench/driver/modes"
	"wafbench/driver/profile"
)

// The realistic suite's workloads whose requests are legitimate probes
// (profiles/realistic.yaml): the shop mix's benign classes and the HAR
// replay's entries.
const (
	RealisticMix    = "shop_mix"
	RealisticReplay = "replay_har"
)

// Class names of the realistic probes: "realistic <workload>" for a class
// of the shop mix, ClassHAR for an entry of the HAR replay.
const (
	classRealistic = "realistic "
	ClassHAR       = "HAR replay"
)

// Realistic builds the legitimate probes of the realistic suite in set:
// every benign class of the shop mix (a class whose workload expects the
// same 2xx status in passthrough and in every engine's default mode; the
// mix's SQL injection probe expects 403 from a WAF and is left out) and
// every entry of the HAR replay, each once, serialized by the profile's
// own request builder (profile.Set.Classes, as the load engine sends
// them). It returns them with one corpus record per source; an error when
// set lacks either workload or a benign request.
func Realistic(set *profile.Set) ([]Probe, []*Corpus, error) {
	var out []Probe
	var corpora []*Corpus
	for _, src := range []struct{ workload, name, class, source string }{
		{RealisticMix, "realistic " + RealisticMix, "", "the benign classes of workload " + RealisticMix + " (profiles/realistic.yaml)"},
		{RealisticReplay, ClassHAR, ClassHAR, "the entries of workload " + RealisticReplay + " (profiles/realistic.yaml)"},
	} {
		w, ok := set.Workloads[src.workload]
		if !ok || !w.IsMix() {
			return nil, nil, fmt.Errorf("realistic corpus: the profiles have no mix or replay workload %s (profiles/realistic.yaml)", src.workload)
		}
		base := set.Classes(w, modes.Passthrough)
		engines := [][]int{}
		for _, m := range []string{modes.ModSecurity, modes.Coraza} {
			var st []int
			for _, c := range set.Classes(w, m) {
				st = append(st, c.Request.ExpectStatus)
			}
			engines = append(engines, st)
		}
		h := sha256.New()
		var names []string
		n := 0
		for i, c := range base {
			if !benign(c.Request.ExpectStatus, engines, i) {
				continue
			}
			class := src.class
			if class == "" {
				class = classRealistic + c.Request.Name
			}
			out = append(out, Probe{ID: src.workload + "/" + c.Request.Name, Class: class, Raw: c.Request.Raw})
			h.Write(c.Request.Raw)
			names = append(names, c.Request.Name)
			n++
		}
		if n == 0 {
			return nil, nil, fmt.Errorf("realistic corpus: workload %s has no benign request", src.workload)
		}
		source := src.source
		if src.class == "" {
			source += ": " + strings.Join(names, ", ")
		}
		corpora = append(corpora, &Corpus{Name: src.name, Source: source + "; each request once, as the load engine sends it",
			SHA256: hex.EncodeToString(h.Sum(nil)), Count: n})
	}
	return out, corpora, nil
}

// benign reports whether class i expects the passthrough status pass (a
// 2xx) in every engine's mode too.
func benign(pass int, engines [][]int, i int) bool {
	if pass < http.StatusOK || pass >= http.StatusMultipleChoices {
		return false
	}
	for _, st := range engines {
		if i >= len(st) || st[i] != pass {
			return false
		}
	}
	return true
}
