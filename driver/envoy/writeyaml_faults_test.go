package envoy

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"wafbench/internal/diskfull"
)

// TestWriteYAMLDiskFullLeavesNoEmptyFile writes a config where the disk is
// full (its temporary file is /dev/full: ENOSPC from the kernel): no empty
// or partial YAML is left.
func TestWriteYAMLDiskFullLeavesNoEmptyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "envoy.yaml")
	diskfull.At(t, path+".tmp")
	err := WriteYAML(Config{Mode: Passthrough, UpstreamAddr: "127.0.0.1:1"}, path)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("got %v, want ENOSPC", err)
	}
	diskfull.NothingLeft(t, dir)
}
