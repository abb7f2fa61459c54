package result

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestMetaEnd(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus string
		wantNotes  []string
	}{
		{"complete", nil, "complete", nil},
		{"interrupted", fmt.Errorf("trial 2: %w", context.Canceled), "interrupted", nil},
		{"failed", errors.New("disk full"), "failed", []string{"run error: disk full"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Meta{Status: "running"}
			m.End(tt.err)
			if m.Status != tt.wantStatus || !slices.Equal(m.Notes, tt.wantNotes) || m.FinishedUTC == "" {
				t.Errorf("got status %q notes %q finished %q; want %q %q and a finish time", m.Status, m.Notes, m.FinishedUTC, tt.wantStatus, tt.wantNotes)
			}
		})
	}
}
