package builds

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSelect(t *testing.T) {
	root := repoRoot(t)
	s, err := Load(filepath.Join(root, "filters", "builds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("pick", func(t *testing.T) {
		got, err := s.Pick([]string{"modsecurity", "coraza"})
		if err != nil || len(got) != 2 || got[0].Mode() != "modsecurity" || got[1].Mode() != "coraza" {
			t.Fatalf("got %v, %v; want the two default builds", got, err)
		}
		if _, err := s.Pick([]string{"modsecurity@nope"}); err == nil || !strings.Contains(err.Error(), `unknown build "modsecurity@nope"; known builds: `) {
			t.Errorf("unknown: got %v, want an error listing the known builds", err)
		}
	})
	t.Run("buildable", func(t *testing.T) {
		chosen, skipped := s.buildable(root)
		seen := map[*Build]bool{}
		for _, b := range chosen {
			seen[b] = true
			if b.Instrument {
				t.Errorf("chosen: %s is instrumented (training only)", b.Mode())
			}
		}
		for _, sk := range skipped {
			seen[sk.Build] = true
			if sk.Build.PGO == nil || sk.Err == nil {
				t.Errorf("skipped: %s (err %v); only pgo builds without a usable profile are", sk.Build.Mode(), sk.Err)
			}
		}
		for i := range s.Builds {
			if b := &s.Builds[i]; !b.Instrument && !seen[b] {
				t.Errorf("%s neither chosen nor skipped", b.Mode())
			}
		}
	})
	t.Run("pgo", func(t *testing.T) {
		got := s.pgoBuilds()
		if len(got) == 0 {
			t.Fatal("no pgo builds in filters/builds.yaml")
		}
		for _, b := range got {
			if b.PGO == nil {
				t.Errorf("%s has no pgo field", b.Mode())
			}
		}
	})
}
