package conformance

import "testing"

func TestLoadCountsTheSuite(t *testing.T) {
	s, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if s.Files != wantFiles || len(s.Tests) != wantTests || s.Stages != wantStages {
		t.Fatalf("got %d files, %d tests, %d stages", s.Files, len(s.Tests), s.Stages)
	}
	tt, ok := s.test("920100-1")
	if !ok || tt.RuleFile != "REQUEST-920-PROTOCOL-ENFORCEMENT" || len(tt.Stages) == 0 {
		t.Fatalf("920100-1: got %+v, %v", tt, ok)
	}
}
