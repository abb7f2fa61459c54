package meta

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/modes"
)

// TestCRSHashesTheFilesOnDisk: the rule-set hash follows an edit made after
// the export (the manifest's would not), and a directory other than the
// default one is compared with a fresh export, the edited file named.
func TestCRSHashesTheFilesOnDisk(t *testing.T) {
	def := filepath.Join(t.TempDir(), "crs")
	man, err := EnsureCRS(def, def)
	if err != nil {
		t.Fatal(err)
	}
	before, err := describeCRS(man, def, def)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Files) == 0 || len(before.Notes) != 0 {
		t.Fatalf("fresh export: got %d files and notes %q, want files and no notes", len(before.Files), before.Notes)
	}
	if _, ok := before.Files["main.conf"]; !ok {
		t.Errorf("files hashed: got %d without main.conf, want main.conf among them", len(before.Files))
	}

	other := filepath.Join(t.TempDir(), "crs")
	if _, err := EnsureCRS(other, other); err != nil { // exported as the default would be
		t.Fatal(err)
	}
	conf := filepath.Join(other, "crs-setup.conf")
	if err := os.WriteFile(conf, []byte("# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	man2, err := EnsureCRS(other, def) // not the default: used as it is
	if err != nil {
		t.Fatal(err)
	}
	after, err := describeCRS(man2, other, def)
	if err != nil {
		t.Fatal(err)
	}
	if after.SHA256 == before.SHA256 {
		t.Errorf("rule-set hash: got %s after an edit, want it to change", after.SHA256)
	}
	if got := strings.Join(after.Notes, "\n"); !strings.Contains(got, "differs from this wafbench's export in: crs-setup.conf") {
		t.Errorf("notes: got %q, want one naming crs-setup.conf", got)
	}
	b, err := os.ReadFile(conf)
	if err != nil || string(b) != "# edited\n" {
		t.Errorf("EnsureCRS rewrote a --crs-dir export: got %q, %v", b, err)
	}
}

// TestModuleMissingIsModuleError: a WAF mode whose module file is absent is
// reported as a *ModuleError naming the mode (the CLI's bad input).
func TestModuleMissingIsModuleError(t *testing.T) {
	m := modes.Mode{Name: modes.Name{Base: modes.Coraza, Engine: modes.Coraza, Host: modes.Envoy}}
	_, err := describeModule(t.TempDir(), m)
	var me *ModuleError
	if !errors.As(err, &me) || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "mode coraza: ") {
		t.Fatalf("got %v, want a *ModuleError for mode coraza wrapping a missing file", err)
	}
}
