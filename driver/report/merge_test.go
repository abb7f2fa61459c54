package report

import (
	"testing"

	"wafbench/driver/merge"
	"wafbench/driver/result"
)

// mergeRuns pools dirs into out and builds its report, as `wafbench merge`
// does.
func mergeRuns(dirs []string, out string, o merge.Options) error {
	if err := merge.Runs(dirs, out, o); err != nil {
		return err
	}
	return Build(out, nil)
}

// setMeta edits dir's meta.json with edit.
func setMeta(t *testing.T, dir string, edit func(*result.Meta)) {
	t.Helper()
	m, err := result.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	if err := result.WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
}
