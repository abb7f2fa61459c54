package main

import (
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	out := map[key]counts{{"coraza", "headers@1"}: {hooks: []float64{1000, 1002}, envoy: []float64{1200, 1203}}}
	for _, tc := range []struct {
		name  string
		hooks []float64
		err   string
	}{
		{"equal", []float64{1000, 1002}, ""},
		{"within the bound", []float64{1004, 1005}, ""},
		{"past the bound", []float64{1010, 1012}, "+0.999% > 0.5%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off := map[key]counts{{"coraza", "headers@1"}: {hooks: tc.hooks, envoy: []float64{1200, 1203}}}
			var b strings.Builder
			err := compare(&b, off, out, 0.5)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("compare: %v, want %q\n%s", err, tc.err, b.String())
			}
		})
	}
	off := map[key]counts{{"coraza", "json_4k@1"}: {hooks: []float64{1}, envoy: []float64{1}}}
	if err := compare(&strings.Builder{}, off, out, 0.5); err == nil || !strings.Contains(err.Error(), "not in the compiled-out run") {
		t.Errorf("a case missing from the compiled-out run: %v, want it named", err)
	}
}
