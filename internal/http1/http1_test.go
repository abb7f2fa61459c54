package http1

import "testing"

func TestParseChunkSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1a", 26, true}, {"FF;ext=1", 255, true}, {" 10 ", 16, true},
		{"", 0, false}, {"g", 0, false}, {"-1", 0, false}, {"1234567890abcdef", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseChunkSize([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseChunkSize(%q): got %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"4096", 4096, true}, {"", 0, false}, {"12a", 0, false}, {"+1", 0, false},
		{"1234567890123456789", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseDecimal([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseDecimal(%q): got %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestEqualFoldAndTrim(t *testing.T) {
	if !EqualFold([]byte("Content-Length"), "content-length") || EqualFold([]byte("Content-Lengt"), "content-length") {
		t.Error("EqualFold")
	}
	if got := string(TrimOWS([]byte(" \tkeep-alive\t "))); got != "keep-alive" {
		t.Errorf("TrimOWS: got %q", got)
	}
}
