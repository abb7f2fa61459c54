package envoy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartTimeout starts a stand-in that never becomes ready: Start gives
// up after StartTimeout with the stage it waited for and the log tail. The
// log already holds a line, so the tail is checked whether or not the
// stand-in got to print before the timeout on a busy machine.
func TestStartTimeout(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake-envoy")
	script := "#!/bin/sh\necho starting fake envoy >&2\nexec sleep 30\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "envoy.log")
	if err := os.WriteFile(logPath, []byte("line before start\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Options{
		Binary: fake, ConfigPath: "unused.yaml", WorkDir: dir, LogPath: logPath, StartTimeout: 300 * time.Millisecond,
	})
	if err == nil {
		t.Fatal("Start of a process that never becomes ready succeeded")
	}
	for _, want := range []string{"not ready after", "waiting for admin /ready LIVE", "line before start"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
