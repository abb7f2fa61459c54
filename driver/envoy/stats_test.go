package envoy

import (
	"maps"
	"testing"
)

func TestParseStats(t *testing.T) {
	doc := `{"stats":[{"name":"a.requests","value":7},{"name":"g","value":0},` +
		`{"histograms":{"computed_quantiles":[]}},{"name":"h","value":{"x":1}},{"name":"neg","value":-1}]}`
	got, err := ParseStats([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"a.requests": 7, "g": 0, "neg": -1}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := ParseStats([]byte("not json")); err == nil {
		t.Error("bad document: got no error")
	}
}
