package load

import (
	"errors"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in      string
		want    target
		wantErr string
	}{
		{in: "http://127.0.0.1:8080/a?b=1", want: target{Addr: "127.0.0.1:8080", Host: "127.0.0.1:8080", Path: "/a?b=1"}},
		{in: "http://localhost", want: target{Addr: "localhost:80", Host: "localhost", Path: "/"}},
		{in: "http://[::1]:9/", want: target{Addr: "[::1]:9", Host: "[::1]:9", Path: "/"}},
		{in: "https://127.0.0.1/", wantErr: `want http://HOST:PORT/PATH, got "https://127.0.0.1/"`},
		{in: "127.0.0.1:80", wantErr: "want http://HOST:PORT/PATH"},
		{in: "http://192.0.2.1/", wantErr: "192.0.2.1 is not a loopback address"},
		{in: "http://example.com/", wantErr: "example.com is not a loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseTarget(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("got %+v, %v; want error starting %q", got, err, tt.wantErr)
				}
				if strings.Contains(tt.wantErr, "loopback") != errors.Is(err, errNotLoopback) {
					t.Errorf("errors.Is(%v, ErrNotLoopback) = %v", err, !strings.Contains(tt.wantErr, "loopback"))
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
