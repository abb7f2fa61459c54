package crssuite

import "testing"

func TestLoadCountsTheSuite(t *testing.T) {
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if s.Files != WantFiles || len(s.Tests) != WantTests || s.Stages != WantStages {
		t.Fatalf("got %d files, %d tests, %d stages", s.Files, len(s.Tests), s.Stages)
	}
	tt, ok := s.Test("920100-1")
	if !ok || tt.RuleFile != "REQUEST-920-PROTOCOL-ENFORCEMENT" || len(tt.Stages) == 0 {
		t.Fatalf("920100-1: got %+v, %v", tt, ok)
	}
}
