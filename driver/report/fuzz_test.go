package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"wafbench/driver/result"
)

// FuzzBuild feeds arbitrary raw.jsonl bytes beside the synthetic run's
// meta.json to Build: it may refuse the input with an error, but it must
// never panic, whatever the records hold.
func FuzzBuild(f *testing.F) {
	meta, err := os.ReadFile(filepath.Join(syntheticRunDir, result.MetaFile))
	if err != nil {
		f.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(syntheticRunDir, result.RawFile))
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	f.Add(raw)
	f.Add(bytes.Join(lines[:2], nil))
	f.Add(raw[:len(raw)/2]) // torn
	for _, absurd := range []string{"0", "-1", "1e300", "-1e300", "5e-324", "1e12", "9007199254740993"} {
		for _, field := range []string{`"req_per_s":`, `"p99_us":`, `"us_per_request":`, `"per_second":[`, `"conns":`} {
			f.Add(bytes.ReplaceAll(raw, []byte(field), []byte(field+absurd+`,"x":`)))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, result.MetaFile), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, result.RawFile), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = Build(dir, nil) // errors are fine; a panic fails the test
	})
}
