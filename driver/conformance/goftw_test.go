//go:build integration

package conformance

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	crstests "github.com/corazawaf/coraza-coreruleset/v4/tests"
	"github.com/coreruleset/go-ftw/v2/config"
	"github.com/coreruleset/go-ftw/v2/output"
	ftwrunner "github.com/coreruleset/go-ftw/v2/runner"
	ftwtest "github.com/coreruleset/go-ftw/v2/test"
	"github.com/rs/zerolog"
)

// goftwFiles are the CRS test files both runners judge: SQL injection,
// XSS and a protocol rule, 43 tests that cover expected IDs, no_expect_ids
// and a status check.
var goftwFiles = []string{
	"REQUEST-942-APPLICATION-ATTACK-SQLI/942100.yaml",
	"REQUEST-941-APPLICATION-ATTACK-XSS/941100.yaml",
	"REQUEST-920-PROTOCOL-ENFORCEMENT/920280.yaml",
}

// TestGoFTWReadsServeCRSTest points go-ftw v2.1.0's own runner at a
// `wafbench serve --crs-test` host (the real Envoy, the Coraza module and
// CRS, albedo behind it) and its match log, with no adapter, and wants its
// verdict on every test of goftwFiles to equal wafbench crs-test's own.
func TestGoFTWReadsServeCRSTest(t *testing.T) {
	bin := wafbenchBin(t)
	zerolog.SetGlobalLevel(zerolog.WarnLevel) // go-ftw logs every header it writes at trace level
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	host, logPath := serveCRSTest(ctx, t, bin)

	var tests []*ftwtest.FTWTest
	var ids []string
	for _, f := range goftwFiles {
		data, err := fs.ReadFile(crstests.FS, f)
		if err != nil {
			t.Fatal(err)
		}
		ft, err := ftwtest.GetTestFromYaml(data, path.Base(f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		tests = append(tests, ft)
		for i := range ft.Tests {
			ids = append(ids, ft.Tests[i].IdString())
		}
	}
	cfg := config.NewDefaultConfig()
	cfg.LogFile = logPath
	rc := config.NewRunnerConfiguration(cfg)
	hostName, portText, _ := strings.Cut(host, ":")
	port, err := strconv.Atoi(portText)
	if err != nil {
		t.Fatal(err)
	}
	rc.TestOverride.Overrides.DestAddr, rc.TestOverride.Overrides.Port = &hostName, &port
	rc.ReadTimeout, rc.ConnectTimeout = 10*time.Second, 5*time.Second
	var out bytes.Buffer
	res, err := ftwrunner.Run(rc, tests, output.NewOutput("quiet", &out))
	if err != nil {
		t.Fatalf("go-ftw runner: %v\n%s", err, out.String())
	}
	ftwPassed := res.Stats.Success

	// The same tests through wafbench crs-test on a fresh host of the same mode.
	results := t.TempDir()
	re := "^(" + strings.Join(ids, "|") + ")$"
	cmd := exec.CommandContext(ctx, bin, "crs-test", "--modes", "coraza", "--tests", re, "--results", results, "--progress", "never")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run() // an unexplained failure exits 1; the verdicts are compared below
	r, err := ReadRunDir(strings.TrimSuffix(strings.TrimSpace(stdout.String()), "/"+MarkdownFile))
	if err != nil {
		t.Fatalf("crs-test: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if len(r.Modes) != 1 || len(r.Modes[0].Tests) != len(ids) {
		t.Fatalf("crs-test ran %+v, want coraza with %d tests\n%s", r.Modes, len(ids), stderr.String())
	}
	var agree, npass int
	for _, tr := range r.Modes[0].Tests {
		ours := tr.Outcome == passed || (tr.Outcome == overridden && allStagesPass(tr))
		theirs := slices.Contains(ftwPassed, tr.ID)
		if ours != theirs {
			t.Errorf("%s: wafbench crs-test passed=%v (%s %s), go-ftw passed=%v", tr.ID, ours, tr.Outcome, tr.Why, theirs)
			continue
		}
		agree++
		if theirs {
			npass++
		}
	}
	if npass < len(ids)*3/4 {
		t.Errorf("go-ftw passed %d of %d tests: it did not read the markers (the log has the marker header's name?)\n%s", npass, len(ids), out.String())
	}
	t.Logf("go-ftw and wafbench crs-test agree on %d of %d tests (%d passed)", agree, len(ids), npass)
}

// allStagesPass reports whether every stage of an overridden test passed
// (an override explains a failure; a test it covers can still pass).
func allStagesPass(tr testResult) bool {
	for _, s := range tr.Stages {
		if !s.Pass {
			return false
		}
	}
	return len(tr.Stages) > 0
}

// serveCRSTest starts `wafbench serve --mode coraza --crs-test` and returns
// its host:port and the match log it prints; the host stops with the test.
func serveCRSTest(ctx context.Context, t *testing.T, bin string) (host, logPath string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "serve", "--mode", "coraza", "--crs-test", "--log-dir", t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	lines := make(chan string)
	var open sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		open.Go(func() {
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				lines <- sc.Text()
			}
		})
	}
	go func() { open.Wait(); close(lines) }()
	const logSays = "the match log: "
	var seen []string
	for host == "" || logPath == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("serve --crs-test exited before it printed its URL and log:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, line)
			if u, err := url.Parse(line); err == nil && u.Scheme == "http" {
				host = u.Host
			}
			if _, p, ok := strings.Cut(line, logSays); ok {
				logPath = p
			}
		case <-ctx.Done():
			t.Fatalf("serve --crs-test: no URL and log within the deadline:\n%s", strings.Join(seen, "\n"))
		}
	}
	go func() {
		for range lines { // drain the pipes until the host stops
		}
	}()
	return host, logPath
}
