package child

import (
	"slices"
	"testing"
)

func TestLastLines(t *testing.T) {
	tests := []struct {
		name, text string
		n          int
		want       []string
	}{
		{"empty", "", 3, nil},
		{"blank", " \n\n", 3, nil},
		{"fewer", "a\nb\n", 3, []string{"a", "b"}},
		{"more", "a\nb\nc\nd\n", 2, []string{"c", "d"}},
		{"no final newline", "a\nb", 1, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LastLines(tt.text, tt.n); !slices.Equal(got, tt.want) {
				t.Errorf("LastLines(%q, %d) = %q, want %q", tt.text, tt.n, got, tt.want)
			}
		})
	}
}
