package conformance

import (
	"strings"
	"testing"

	"wafbench/driver/modes"
	"wafbench/driver/result"
)

func TestRejudge(t *testing.T) {
	coraza := modes.Mode{Name: modes.Name{Base: "coraza", Engine: "coraza", Host: modes.Envoy}}
	run := &run{Modes: []modeResult{{Mode: "coraza", Tests: []testResult{
		{ID: "a", Outcome: overridden, Override: "old", Why: "stage 1: status 400, want 200 (x)", Stages: []stageResult{{Status: 400, Why: "status 400, want 200"}}},
		{ID: "b", Outcome: Failed, Why: "stage 1: no", Stages: []stageResult{{Status: 200, Why: "no"}}},
		{ID: "c", Outcome: passed, Stages: []stageResult{{Status: 200, Pass: true}}},
	}}}}
	ov := &overrides{Entries: []override{{Name: "new", Tests: []string{"b", "c"}, Cause: causeEngine, Reason: "r"}}}
	if err := run.rejudge(ov, func(string) (modes.Mode, error) { return coraza, nil }); err != nil {
		t.Fatal(err)
	}
	got := run.Modes[0]
	if got.Tests[0].Outcome != Failed || got.Tests[0].Override != "" || got.Tests[0].Why != "stage 1: status 400, want 200" {
		t.Errorf("a no longer overridden: got %+v", got.Tests[0])
	}
	if got.Tests[1].Outcome != overridden || got.Tests[1].Override != "new" {
		t.Errorf("b newly overridden: got %+v", got.Tests[1])
	}
	if len(got.Stale) != 1 || got.Counts.Failed != 1 || got.Counts.Overridden != 1 || got.Counts.ByCause[causeEngine] != 1 || run.unexplained() != 1 {
		t.Errorf("stale %v, counts %+v", got.Stale, got.Counts)
	}
}

func TestProtect(t *testing.T) {
	pass := func(id string) testResult { return testResult{ID: id, Outcome: passed} }
	fail := func(id string) testResult { return testResult{ID: id, Outcome: Failed} }
	older := Found{Dir: "results/1-crs-test", Run: &run{Suite: "CRS", Tests: 2, Modes: []modeResult{
		{Mode: "coraza", Engine: "coraza", Host: "envoy", ModuleSHA256: "aaa", Tests: []testResult{pass("t1"), pass("t2")}},
	}}}
	newer := Found{Dir: "runs/2-crs-test", Run: &run{Suite: "CRS", Tests: 3, Modes: []modeResult{
		{Mode: "coraza", Engine: "coraza", Host: "envoy", Build: "coraza", ModuleSHA256: "bbb", Tests: []testResult{pass("t1"), pass("t2"), fail("t3")}},
		{Mode: "coraza@re2", Engine: "coraza", Host: "envoy", Build: "coraza@re2", ModuleSHA256: "ccc", Tests: []testResult{pass("t1"), fail("t2"), pass("t3")}},
		{Mode: "coraza@new", Engine: "coraza", Host: "envoy", Build: "coraza@new", ModuleSHA256: "ddd", Tests: []testResult{pass("t1"), pass("t2"), pass("t3")}},
		{Mode: "ref-nginx-modsecurity", Engine: "modsecurity", Host: "nginx", EngineVersion: "3.0.9", Tests: []testResult{pass("t1"), fail("t2")}},
	}}}
	for _, f := range []Found{older, newer} {
		for i := range f.Run.Modes {
			f.Run.Modes[i].count()
		}
	}
	meta := &result.Meta{Modes: []string{"passthrough", "coraza", "coraza@re2", "coraza@new", "ref-nginx-modsecurity"}, Modules: map[string]result.Module{
		"coraza":                {SHA256: "aaa", Engine: "coraza"},
		"coraza@re2":            {SHA256: "ccc", Engine: "coraza"},
		"coraza@new":            {SHA256: "ddd", Engine: "coraza"},
		"ref-nginx-modsecurity": {Engine: "modsecurity", EngineVersion: "3.0.9"},
	}}
	p := protect(meta, []Found{newer, older})
	if len(p.Modes) != 4 {
		t.Fatalf("got %+v, want the four WAF modes", p.Modes)
	}
	c, re2, added, nginx := p.Modes[0], p.Modes[1], p.Modes[2], p.Modes[3]
	if c.Source != older.Dir || c.Match != "module sha256" || c.PassRate != 1 || c.VsDefault != 0 {
		t.Errorf("coraza: got %+v, want the older run (the very module)", c)
	}
	if re2.Source != newer.Dir || re2.VsDefault != 2 || re2.Lost == nil || *re2.Lost != 1 || len(re2.Differs) != 2 || re2.Differs[0] != "t2" {
		t.Errorf("coraza@re2: got %+v, want 2 tests differing from its default, 1 of them lost", re2)
	}
	if added.VsDefault != 1 || added.Lost == nil || *added.Lost != 0 {
		t.Errorf("coraza@new: got %+v, want 1 test differing from its default, none lost (it passes more)", added)
	}
	if nginx.Match != "engine version" || nginx.Failed != 1 {
		t.Errorf("nginx: got %+v, want matched by engine version", nginx)
	}
}

// TestProtectOtherRules: a mode under another CRS release or the user's own
// configuration runs rules crs-test did not test, so its very module's
// crs-test result does not stand for it; a paranoia level does.
func TestProtectOtherRules(t *testing.T) {
	f := Found{Dir: "runs/1-crs-test", Run: &run{Suite: "CRS", Tests: 1, Modes: []modeResult{
		{Mode: "coraza", Engine: "coraza", Host: "envoy", ModuleSHA256: "aaa", Tests: []testResult{{ID: "t1", Outcome: passed}}},
	}}}
	f.Run.Modes[0].count()
	mods := map[string]result.Module{}
	ms := []string{"coraza+pl2", "coraza+crs4.22.0", "coraza+mine"}
	for _, m := range ms {
		mods[m] = result.Module{SHA256: "aaa", Engine: "coraza"}
	}
	p := protect(&result.Meta{Modes: ms, Modules: mods}, []Found{f})
	if len(p.Modes) != 3 {
		t.Fatalf("got %+v, want three modes", p.Modes)
	}
	if pl2 := p.Modes[0]; pl2.Match != "module sha256" || pl2.Unmatched != "" {
		t.Errorf("coraza+pl2: got %+v, want matched by its module", pl2)
	}
	for _, mp := range p.Modes[1:] {
		if mp.Match != "" || !strings.Contains(mp.Unmatched, "not configuration") || mp.Passed != 0 {
			t.Errorf("%s: got %+v, want unmatched with the reason", mp.Mode, mp)
		}
	}
}

func TestTrimLog(t *testing.T) {
	log := "start-up\n" +
		`x [id "999999"] [msg "wafbench-proof-end"]` + "\n" +
		`[id "920100"] a` + "\n" + `x [id "999999"] [msg "wafbench-920100-1-1-end"]` + "\n" +
		`[id "942100"] b` + "\n" + `x [id "999999"] [msg "wafbench-942100-2-1-end"]` + "\n" +
		"[id \"942100\"] c\n" + `x [id "999999"] [msg "wafbench-942100-2-1-retry-end"]` + "\n" + "shutdown\n"
	got := string(TrimLog([]byte(log), func(id string) bool { return id == "942100-2" }))
	for _, want := range []string{"start-up\n", "wafbench-proof-end", "] b\n", "] c\n", "retry-end", "shutdown\n", "2 stages", "1 windows"} {
		if !strings.Contains(got, want) {
			t.Errorf("trimmed log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "] a\n") || strings.Contains(got, "920100-1-1-end") {
		t.Errorf("trimmed log keeps a passing test's window:\n%s", got)
	}
}
