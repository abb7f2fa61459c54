package protection

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"wafbench/driver/modes"
	"wafbench/driver/profile"
)

// TestRealisticCorpus checks the realistic corpus against the profiles
// themselves: every class of the shop mix that no WAF is expected to
// refuse and every entry of the HAR replay is a probe, once, with the
// bytes the load engine sends; the mix's attack class is not.
func TestRealisticCorpus(t *testing.T) {
	set, err := profile.LoadDir(filepath.Join("..", "..", "profiles"))
	if err != nil {
		t.Fatal(err)
	}
	ps, corpora, err := Realistic(set)
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string][]byte{}
	for _, p := range ps {
		if _, dup := raw[p.ID]; dup {
			t.Errorf("probe %s twice", p.ID)
		}
		raw[p.ID] = p.Raw
	}
	var benign, attack []string
	mix := set.Workloads[RealisticMix]
	for _, c := range set.Classes(mix, modes.Coraza) {
		id := RealisticMix + "/" + c.Request.Name
		got, ok := raw[id]
		if c.Request.ExpectStatus == 403 {
			attack = append(attack, c.Request.Name)
			if ok {
				t.Errorf("attack class %s is a legitimate probe", c.Request.Name)
			}
			continue
		}
		benign = append(benign, c.Request.Name)
		if !ok {
			t.Errorf("benign class %s of %s is not a probe", c.Request.Name, RealisticMix)
		} else if string(got) != string(c.Request.Raw) {
			t.Errorf("class %s: probe bytes differ from the load engine's request", c.Request.Name)
		}
	}
	sort.Strings(benign)
	if want := "api_get,api_post_json,form_login,page_get"; strings.Join(benign, ",") != want {
		t.Errorf("benign classes of %s: got %v, want %s", RealisticMix, benign, want)
	}
	if len(attack) != 1 || attack[0] != "api_sqli" {
		t.Errorf("attack classes of %s: got %v, want api_sqli", RealisticMix, attack)
	}
	har := set.Classes(set.Workloads[RealisticReplay], modes.Coraza)
	nhar := 0
	for _, p := range ps {
		if p.Class == ClassHAR {
			nhar++
		}
	}
	if len(har) < 2 || nhar != len(har) {
		t.Errorf("HAR replay: %d probes, want its %d entries (at least 2)", nhar, len(har))
	}
	if len(ps) != len(benign)+len(har) {
		t.Errorf("got %d probes, want %d benign classes + %d HAR entries", len(ps), len(benign), len(har))
	}
	if len(corpora) != 2 || corpora[0].Count != len(benign) || corpora[1].Count != len(har) || corpora[0].SHA256 == "" {
		t.Errorf("corpora: got %+v", corpora)
	}
}

// TestRealisticMissing: profiles without the realistic suite's workloads
// are an error naming the missing one.
func TestRealisticMissing(t *testing.T) {
	set, err := profile.Parse("x.yaml", []byte("workloads:\n  - {name: w, method: GET, path: /, conns: [1], expect: {default: 200}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Realistic(set); err == nil || !strings.Contains(err.Error(), RealisticMix) {
		t.Errorf("got %v, want an error naming %s", err, RealisticMix)
	}
}
