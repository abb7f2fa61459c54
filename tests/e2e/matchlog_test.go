//go:build integration

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"wafbench/driver/envoy"
	"wafbench/internal/crs"
)

// The match_log tests (the match-log contract, filters/*/README.md): every host, loading
// the real CRS in a DetectionOnly paranoia-level-4 configuration with the
// conformance marker rule 999999, writes one wafbench-match line per rule
// match to its log. Each case sends a marker request, the request under
// test and a closing marker, waits for the closing marker's line (the
// explicit signal: the host handles one connection's requests in order, so
// every line of the request under test, phase 5 included, is written
// before it) and reads the rule ids logged between the two markers, as the
// CRS runner does.

// matchLogLeakBody is the backend's answer on /leak: a MySQL error page,
// which CRS's RESPONSE-951 rules (951230, MySQL) report.
const matchLogLeakBody = "<html><body>You have an error in your SQL syntax; check the manual that corresponds " +
	"to your MySQL server version for the right syntax to use near ''' at line 1</body></html>\n"

// matchLogOverrides follow the common configuration of the CRS export
// (which enforces and reads requests only): the engine settings the CRS
// regression suite runs with (CRS's test settings), written here for the test;
// the production conformance configuration is the driver's.
const matchLogOverrides = `SecRuleEngine DetectionOnly
SecResponseBodyAccess On
SecResponseBodyMimeType text/plain text/html text/xml application/json
SecDefaultAction "phase:3,log,auditlog,pass"
SecDefaultAction "phase:4,log,auditlog,pass"
SecDefaultAction "phase:5,log,auditlog,pass"
SecAction "id:900005,phase:1,nolog,pass,t:none,setvar:tx.crs_validate_utf8_encoding=1,setvar:tx.arg_name_length=100,setvar:tx.arg_length=400,setvar:tx.total_arg_length=64000,setvar:tx.max_num_args=255,setvar:tx.max_file_size=64100,setvar:tx.combined_file_sizes=65535"
SecRule REQUEST_HEADERS:X-CRS-Test "@rx ^.*$" "id:999999,phase:1,pass,t:none,log,msg:'%{MATCHED_VAR}'"
`

var matchLogFx struct {
	once    sync.Once
	rules   string // the test configuration's entry point
	backend string // host:port of the backend
	err     error
}

// matchLogSetup exports CRS at paranoia level 4, writes the test
// configuration beside it and starts the backend (once per test binary).
func matchLogSetup(t *testing.T) (rules, backend string) {
	t.Helper()
	if fx.setupE != nil {
		t.Fatalf("e2e fixture: %v", fx.setupE)
	}
	matchLogFx.once.Do(func() {
		dir := filepath.Join(fx.tmp, "matchlog-crs")
		man, err := crs.Export(dir, crs.Options{ParanoiaLevel: 4})
		if err != nil {
			matchLogFx.err = fmt.Errorf("crs export: %w", err)
			return
		}
		main, err := os.ReadFile(man.MainConf)
		if err != nil {
			matchLogFx.err = err
			return
		}
		common := "Include " + filepath.Join(dir, crs.CommonFile) + "\n"
		if !bytes.Contains(main, []byte(common)) {
			matchLogFx.err = fmt.Errorf("%s: no line %q", man.MainConf, strings.TrimSpace(common))
			return
		}
		conf := strings.Replace(string(main), common, common+matchLogOverrides, 1)
		matchLogFx.rules = filepath.Join(dir, "matchlog.conf")
		if matchLogFx.err = os.WriteFile(matchLogFx.rules, []byte(conf), 0o644); matchLogFx.err != nil {
			return
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			matchLogFx.err = err
			return
		}
		matchLogFx.backend = ln.Addr().String()
		mux := http.NewServeMux()
		mux.HandleFunc("/leak", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(matchLogLeakBody))
		})
		mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("ok\n"))
		})
		go (&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln) // ends with the test binary
	})
	if matchLogFx.err != nil {
		t.Fatalf("match_log fixture: %v", matchLogFx.err)
	}
	return matchLogFx.rules, matchLogFx.backend
}

// matchLogEnvoy starts an Envoy of mode with match_log and response
// inspection on, in front of the backend; the test stops it.
func matchLogEnvoy(t *testing.T, mode envoy.Mode) (addr, logPath string) {
	t.Helper()
	rules, backend := matchLogSetup(t)
	cfg := envoy.Config{
		Mode:             mode,
		UpstreamAddr:     backend,
		ModuleSearchPath: fx.modules,
		RulesFile:        rules,
		MaxBodyBytes:     maxBody,
		InspectResponse:  true,
		MatchLog:         true,
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("%v; %s", err, setupHint)
	}
	dir := filepath.Join(fx.tmp, "matchlog-"+string(mode))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "envoy.yaml")
	if err := envoy.WriteYAML(cfg, path); err != nil {
		t.Fatal(err)
	}
	start := 2 * time.Minute
	if mode == envoy.CorazaWasm {
		start = 5 * time.Minute // V8 compiles the whole module first
	}
	ctx, cancel := context.WithTimeout(context.Background(), start)
	defer cancel()
	p, err := envoy.Start(ctx, envoy.Options{Binary: fx.binary, ConfigPath: path, WorkDir: dir, Concurrency: 1,
		Env: envoy.Env(cfg), StartTimeout: start})
	if err != nil {
		t.Fatalf("envoy %s: %v", mode, err)
	}
	t.Cleanup(func() {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Errorf("stop envoy %s: %v", mode, err)
		}
	})
	return p.ListenerAddr, p.LogPath
}

// matchLogCase is one request whose matches a host must log.
type matchLogCase struct {
	name    string
	target  string
	wantIDs []string // rule ids that must be logged for the request
	status  int      // the status the client must get (DetectionOnly: the backend's)
}

var matchLogCases = []matchLogCase{
	// libinjection's SQL injection rule on a query argument.
	{name: "attack", target: "/?id=1%27%20OR%20%271%27%3D%271", wantIDs: []string{"942100"}, status: 200},
	// An SQL error message in the response body: phase 4, RESPONSE-951.
	{name: "response", target: "/leak", wantIDs: []string{"951230"}, status: 200},
}

// runMatchLog sends each case between two markers on one connection to
// addr and checks the host's log at logPath.
func runMatchLog(t *testing.T, host, addr, logPath string, timeout time.Duration) {
	t.Helper()
	c, err := Dial(addr, timeout)
	if err != nil {
		t.Fatalf("dial %s: %v", host, err)
	}
	defer c.Close()
	send := func(target string, extra ...[2]string) *response {
		t.Helper()
		hs := append(append([][2]string{}, baseHeaders...), extra...)
		resp, err := c.do("GET", request{Method: "GET", Target: target, Headers: hs}.bytes())
		if err != nil {
			t.Fatalf("%s: GET %s: %v", host, target, err)
		}
		return resp
	}
	for _, tc := range matchLogCases {
		t.Run(tc.name, func(t *testing.T) {
			begin, end := fmt.Sprintf("begin-%s-%s \"q\"", host, tc.name), fmt.Sprintf("end-%s-%s", host, tc.name)
			if r := send("/marker", [2]string{"X-CRS-Test", begin}); r.Status != 200 {
				t.Fatalf("begin marker: status %d", r.Status)
			}
			r := send(tc.target)
			if r.Status != tc.status {
				t.Errorf("GET %s: status %d, want %d (DetectionOnly forwards)", tc.target, r.Status, tc.status)
			}
			if tc.name == "response" && !bytes.Equal(r.Body, []byte(matchLogLeakBody)) {
				t.Errorf("GET %s: body %q, want the backend's", tc.target, r.Body)
			}
			if r := send("/marker", [2]string{"X-CRS-Test", end}); r.Status != 200 {
				t.Fatalf("end marker: status %d", r.Status)
			}
			ids := idsBetween(t, logPath, begin, end)
			for _, id := range tc.wantIDs {
				if !ids[id] {
					t.Errorf("log %s: no [id %q] between the markers; got ids %v", logPath, id, keys(ids))
				}
			}
		})
	}
}

// matchLineRE finds a wafbench-match line's id and message.
var matchLineRE = regexp.MustCompile(`wafbench-match \[id "(\d+)"\] \[msg "((?:[^"\\]|\\.)*)"\]`)

// markerMsg is the message a marker value gets in a match line.
func markerMsg(v string) string { return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) }

// idsBetween waits (bounded) until the log holds the marker line of end
// and returns the ids of the lines between the marker lines of begin and
// end.
func idsBetween(t *testing.T, logPath, begin, end string) map[string]bool {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		var ids map[string]bool
		sawEnd := false
		for _, l := range strings.Split(string(b), "\n") {
			m := matchLineRE.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			switch {
			case m[1] == "999999" && m[2] == markerMsg(begin):
				ids = map[string]bool{}
			case m[1] == "999999" && m[2] == markerMsg(end):
				sawEnd = ids != nil
			case ids != nil && !sawEnd && m[1] != "999999":
				ids[m[1]] = true
			}
		}
		if sawEnd {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("log %s: no marker lines %q then %q within 30s (match_log on?)", logPath, begin, end)
		}
		time.Sleep(50 * time.Millisecond) // polling the file for the marker line, the signal
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestMatchLogNative: both native modules through real Envoy.
func TestMatchLogNative(t *testing.T) {
	for _, mode := range []envoy.Mode{envoy.ModSecurity, envoy.Coraza} {
		t.Run(string(mode), func(t *testing.T) {
			addr, logPath := matchLogEnvoy(t, mode)
			runMatchLog(t, string(mode), addr, logPath, 10*time.Second)
		})
	}
}

// TestMatchLogWasm: coraza-wasm through real Envoy (one start, ~30 s of V8
// compilation, for every case).
func TestMatchLogWasm(t *testing.T) {
	addr, logPath := matchLogEnvoy(t, envoy.CorazaWasm)
	runMatchLog(t, string(envoy.CorazaWasm), addr, logPath, wasmIOTimeout)
}

// TestMatchLogCaddy: ref-caddy-coraza, the real Caddy executable of
// `make modules` with the handler's match_log and inspect_response on.
func TestMatchLogCaddy(t *testing.T) {
	rules, backend := matchLogSetup(t)
	bin := filepath.Join(fx.root, "build", "caddy-coraza", "caddy")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("caddy: %v; run `make modules` (builds build/caddy-coraza/caddy)", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close() // Caddy binds it next; a clash fails the start below, it does not pass silently
	dir := filepath.Join(fx.tmp, "matchlog-caddy")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`{"admin": {"disabled": true},
 "apps": {"http": {"servers": {"s": {"listen": [%q], "automatic_https": {"disable": true},
  "routes": [{"handle": [
   {"handler": "wafbench_coraza", "rules_file": %q, "max_body_bytes": %d, "inspect_response": true, "match_log": true},
   {"handler": "reverse_proxy", "upstreams": [{"dial": %q}]}]}]}}}}}`, listen, rules, maxBody, backend)
	confPath := filepath.Join(dir, "caddy.json")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "caddy.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "run", "--config", confPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	// Ready when the listener accepts (bounded; Caddy loads CRS first).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := net.DialTimeout("tcp", listen, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("caddy exited before listening: %v\n%s", err, b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("caddy did not listen on %s: %v", listen, errors.Join(err))
		}
		time.Sleep(50 * time.Millisecond)
	}
	runMatchLog(t, "ref-caddy-coraza", listen, logPath, 10*time.Second)
}
