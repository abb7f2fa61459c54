package waf

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"wafbench/driver/hosts"
)

// The ModSecurity names kept in Go are the module's: counters in order,
// reply bodies and details (module.cc).
func TestModSecurityNamesMatchModule(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "modsecurity", "module.cc"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)kCounterNames\[kNumCounters\] = \{(.*?)\};`).FindSubmatch(src)
	if block == nil {
		t.Fatal("module.cc: no kCounterNames initializer")
	}
	var got []string
	for _, m := range regexp.MustCompile(`"([a-z0-9_]+)"`).FindAllSubmatch(block[1], -1) {
		got = append(got, string(m[1]))
	}
	if fmt.Sprint(got) != fmt.Sprint(msCounterNames) {
		t.Errorf("module.cc counters %v, Go %v", got, msCounterNames)
	}
	for _, s := range []string{msBlockedBody, msErrorBody, msErrorDetails} {
		lit := `"` + strings.ReplaceAll(s, "\n", `\n`) + `"`
		if !strings.Contains(string(src), lit) {
			t.Errorf("module.cc lacks %s", lit)
		}
	}
}

// The self-report line is one the driver's identity check reads.
func TestSelfReportReadByDriver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	line := selfReportLine("modsecurity", "3.0.9", "modsecurity", 847)
	if err := os.WriteFile(path, []byte("other line\n"+line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := hosts.ReadModuleInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Engine != "modsecurity" || info.EngineVersion != "3.0.9" || info.Build != "modsecurity" || info.Rules != 847 {
		t.Errorf("got %+v", info)
	}
}

// Stage-timer counters exist only when the timers are on, as in the modules.
func TestCountersDefined(t *testing.T) {
	names := []string{"a", "b", "t1", "t2"}
	for _, tt := range []struct {
		timers bool
		want   int
	}{{false, 2}, {true, 4}} {
		c := newCounters(names, 2, tt.timers)
		c.add(0, 3)
		c.add(3, 7)
		st := c.stats()
		if len(st) != tt.want || st[0] != (Stat{"a", 3}) {
			t.Errorf("timers %v: got %v, want %d counters with a=3", tt.timers, st, tt.want)
		}
		if tt.timers && st[3].Value != 7 {
			t.Errorf("timers on: t2 = %d, want 7", st[3].Value)
		}
	}
}

func TestOpenRefusesUnknownEngine(t *testing.T) {
	if _, err := Open("naxsi", []byte(`{}`), "x"); err == nil || !strings.Contains(err.Error(), "naxsi") {
		t.Errorf("got %v, want an error naming the engine", err)
	}
}

// WAFBENCH_STAGE_TIMERS=1 defines the module's stage timers, which then
// move; without it only the five counters exist.
func TestStageTimers(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.conf")
	if err := os.WriteFile(rules, []byte("SecRuleEngine On\nSecRule ARGS \"@contains attack\" \"id:1,phase:2,deny,status:403\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := []byte(fmt.Sprintf(`{"rules_file":%q}`, rules))
	for _, tt := range []struct {
		env  string
		want []string
	}{
		{"", []string{"requests", "blocked_phase1", "blocked_phase2", "body_too_large", "engine_errors"}},
		{"1", []string{"requests", "blocked_phase1", "blocked_phase2", "body_too_large", "engine_errors",
			"phase1_ns", "body_ns", "phase2_ns", "logging_ns"}},
	} {
		t.Setenv(StageTimersEnv, tt.env)
		eng, err := Open("coraza", cfg, "coraza")
		if err != nil {
			t.Fatal(err)
		}
		st := eng.NewStream()
		if r := st.RequestHeaders(Request{Headers: [][2]string{{":method", "GET"}, {":path", "/?a=attack"}}}, true); r == nil || r.Status != 403 {
			t.Errorf("timers %q: reply %+v, want 403", tt.env, r)
		}
		st.Close()
		var names []string
		var timed uint64
		for _, s := range eng.Stats() {
			names = append(names, strings.TrimPrefix(s.Name, "wafbench_coraza_"))
			if strings.HasSuffix(s.Name, "_ns") {
				timed += s.Value
			}
		}
		if fmt.Sprint(names) != fmt.Sprint(tt.want) {
			t.Errorf("timers %q: counters %v, want %v", tt.env, names, tt.want)
		}
		if tt.env == "1" && timed == 0 {
			t.Errorf("timers on: no time counted")
		}
		eng.Close()
	}
}
