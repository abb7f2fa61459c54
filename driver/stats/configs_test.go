package stats

import "testing"

func TestConfigPairs(t *testing.T) {
	ms := []string{"passthrough", "modsecurity+pl1", "modsecurity+pl4", "coraza+pl1", "coraza+pl4"}
	has := map[string]bool{}
	for _, m := range ms {
		has[m] = true
	}
	var got []string
	for _, sp := range configPairs(ms, has) {
		got = append(got, string(sp.family)+": "+sp.num+"/"+sp.den)
	}
	want := []string{
		string(FamilyConfigs) + ": modsecurity+pl4/modsecurity+pl1",
		string(FamilyConfigs) + ": coraza+pl4/coraza+pl1",
		string(FamilyEngines) + ": modsecurity+pl1/coraza+pl1",
		string(FamilyEngines) + ": modsecurity+pl4/coraza+pl4",
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d: got %q, want %q", i, got[i], want[i])
		}
	}
}
