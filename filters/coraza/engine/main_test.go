package engine

import (
	"os"
	"testing"
)

func tmpDir() (string, error) { return os.MkdirTemp("", "wafbench-crs-") }

func TestMain(m *testing.M) {
	code := m.Run()
	if crsDir != "" {
		os.RemoveAll(crsDir)
	}
	os.Exit(code)
}
