package engine

import (
	"path/filepath"
	"testing"

	"wafbench/internal/rulefiles"
)

// TestNewFSBundle loads the real CRS from an in-memory bundle of its files
// (what the Wasm filter does) and checks it is the same rule set, with the
// same verdicts, as loading it from disk.
func TestNewFSBundle(t *testing.T) {
	disk := loadCRS(t)
	main := disk.Config().RulesFile
	b, err := rulefiles.ReadBundle(main)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := newFS(Config{RulesFile: main}, b)
	if err != nil {
		t.Fatalf("NewFS: %v", err)
	}
	if got, want := mem.Rules(), disk.Rules(); got != want || got <= 0 {
		t.Errorf("rules: got %d from the bundle, want %d (from disk)", got, want)
	}
	for _, req := range []request{
		{Method: "GET", Path: "/", Headers: benignHeaders},
		{Method: "GET", Path: "/?id=1%27%20OR%20%271%27=%271", Headers: benignHeaders},
		{Method: "POST", Path: "/", Headers: withHeaders([2]string{"Content-Type", "application/json"}), Body: jsonBody(4096)},
	} {
		if got, want := mem.evaluate(req), disk.evaluate(req); got != want {
			t.Errorf("%s %s: got %+v from the bundle, want %+v", req.Method, req.Path, got, want)
		}
	}
	delete(b, filepath.Join(filepath.Dir(main), "crs-setup.conf"))
	if _, err := newFS(Config{RulesFile: main}, b); err == nil {
		t.Error("NewFS with a file missing from the bundle: got no error")
	}
}
