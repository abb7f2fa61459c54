//go:build integration

package envoy

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wafbench/driver/cpu"
)

func TestStartStop(t *testing.T) {
	bin := envoyBinary(t)
	dir := t.TempDir()
	online, err := cpu.Online()
	if err != nil {
		t.Fatal(err)
	}
	pin := online[len(online)-1:]
	p, err := Start(context.Background(), Options{
		Binary:     bin,
		ConfigPath: writePassthrough(t, dir),
		WorkDir:    dir,
		CPUs:       pin,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pid %d admin %s listener %s: admin ready %v, listener ready %v",
		p.PID, p.AdminAddr, p.ListenerAddr, p.AdminReady, p.ListenerReady)
	stopped := false
	defer func() {
		if !stopped {
			p.Stop(patient)
		}
	}()

	if p.AdminReady <= 0 || p.ListenerReady < p.AdminReady {
		t.Errorf("AdminReady %v, ListenerReady %v: want 0 < admin <= listener", p.AdminReady, p.ListenerReady)
	}
	threads, err := cpu.Verify(p.PID, pin)
	if err != nil {
		t.Error(err)
	}
	if len(threads) < 3 { // main, worker, and Envoy's helper threads
		t.Errorf("envoy threads %v, want several", threads)
	}

	req, _ := http.NewRequest(http.MethodGet, "http://"+p.ListenerAddr+"/safe", nil)
	req.Header.Set(BlockHeader, BlockValue)
	client := &http.Client{Timeout: patient, Transport: &http.Transport{}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Proto != "HTTP/1.1" {
		t.Errorf("phase1-block request: %s %d, want HTTP/1.1 403", resp.Proto, resp.StatusCode)
	}
	client.CloseIdleConnections()

	ctx := context.Background()
	stats, err := p.Stats(ctx)
	if err != nil || !strings.Contains(string(stats), `"stats"`) {
		t.Errorf("Stats: %v, %.80q", err, stats)
	}
	info, err := p.serverInfo(ctx)
	if err != nil || !strings.Contains(string(info), `"LIVE"`) {
		t.Errorf("ServerInfo: %v, %.80q", err, info)
	}

	if err := p.Stop(patient); err != nil {
		t.Errorf("Stop: %v", err)
	}
	stopped = true
	if _, err := os.Stat("/proc/" + strconv.Itoa(p.PID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("/proc/%d still present after Stop (err %v)", p.PID, err)
	}
	if err := syscall.Kill(-p.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still has members after Stop (kill 0: %v)", p.PID, err)
	}
	select {
	case <-p.Done():
	default:
		t.Error("Done not closed after Stop")
	}
}

func TestStartBadConfig(t *testing.T) {
	bin := envoyBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "envoy.yaml")
	if err := os.WriteFile(cfg, []byte("static_resources: {clusters: [{name: x, type: NOPE}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Options{Binary: bin, ConfigPath: cfg, WorkDir: dir})
	if err == nil {
		t.Fatal("Start with a bad config succeeded")
	}
	for _, want := range []string{"exited during startup", "exit status", "envoy log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func writePassthrough(t *testing.T, dir string) string {
	t.Helper()
	cfg := filepath.Join(dir, "envoy.yaml")
	// Nothing listens upstream: only the direct_response route is used.
	if err := WriteYAML(Config{Mode: Passthrough, UpstreamAddr: "127.0.0.1:9"}, cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// patient bounds waits that only a hung Envoy would reach; Stop and the
// client return as soon as Envoy has done its part, so a busy machine only
// makes them slower, never failing.
const patient = time.Minute
