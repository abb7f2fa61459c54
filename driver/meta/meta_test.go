package meta

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wafbench/driver/modes"
	"wafbench/driver/result"
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
	var unmeasured []string
	_, err := describeModule(t.TempDir(), m, &unmeasured)
	var me *ModuleError
	if !errors.As(err, &me) || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "mode coraza: ") {
		t.Fatalf("got %v, want a *ModuleError for mode coraza wrapping a missing file", err)
	}
}

// repoRoot is the checkout this test runs in (driver/meta is two levels
// down).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestEngineVersionUnreadableIsRecorded: a Coraza module without Go build
// information gets no invented version ("unknown" before): the version is
// empty and the failure is listed in unmeasured, naming the mode.
func TestEngineVersionUnreadableIsRecorded(t *testing.T) {
	dir := t.TempDir()
	n, err := modes.Parse(modes.Coraza)
	if err != nil {
		t.Fatal(err)
	}
	m := modes.Mode{Name: n, Dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "libwafbench_coraza.so"), []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	var unmeasured []string
	mod, err := describeModule(dir, m, &unmeasured)
	if err != nil {
		t.Fatal(err)
	}
	if mod.EngineVersion != "" || len(unmeasured) != 1 || !strings.HasPrefix(unmeasured[0], "mode coraza: engine version: ") {
		t.Errorf("got version %q, unmeasured %q; want no version and one line naming mode coraza", mod.EngineVersion, unmeasured)
	}
}

// TestDescribeRecordsTheMachine: Describe records the CPU fingerprint and
// the measured CLK_TCK, and nothing in unmeasured on this machine.
func TestDescribeRecordsTheMachine(t *testing.T) {
	root := repoRoot(t)
	var m result.Meta
	bin, err := os.Executable() // any readable file stands in for Envoy: only its hash is taken
	if err != nil {
		t.Fatal(err)
	}
	if err := Describe(&m, Stack{RepoDir: root, EnvoyBinary: bin}); err != nil {
		t.Fatal(err)
	}
	if m.Processor == nil || m.Processor.Vendor == "" || m.Processor.Family == 0 || len(m.Processor.ISA) != len(result.ISAChecked) {
		t.Errorf("processor: got %+v, want vendor, family and every checked extension", m.Processor)
	}
	if m.ClkTck <= 0 || len(m.Unmeasured) != 0 {
		t.Errorf("got clk_tck %d, unmeasured %q; want CLK_TCK measured and nothing unmeasured", m.ClkTck, m.Unmeasured)
	}
}
