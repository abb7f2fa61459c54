package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestFlagGroups prints every command's --help: a command whose flag
// table misses a flag, repeats one or names one it does not define fails
// (writeHelp refuses it), and every grouped flag appears exactly once.
func TestFlagGroups(t *testing.T) {
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{c.name, "--help"}, &stdout, &stderr)
			if !errors.Is(err, errHelp) {
				t.Fatalf("--help: got %v, want the help", err)
			}
			for _, g := range flagGroups[c.name] {
				if !strings.Contains(stdout.String(), "\n"+g.title+":\n") {
					t.Errorf("group %q missing from the help", g.title)
				}
				for _, n := range g.names {
					if got := strings.Count(stdout.String(), "\n  --"+n+" ") + strings.Count(stdout.String(), "\n  --"+n+"\n"); got != 1 {
						t.Errorf("--%s appears %d times, want 1", n, got)
					}
				}
			}
			if strings.Contains(stdout.String(), "-1ns") {
				t.Errorf("help states a default of -1ns")
			}
		})
	}
}

// TestCheckGroups: a flag in no group, in two, or a name that is no flag
// is refused.
func TestCheckGroups(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("a", 0, "")
	fs.Int("b", 0, "")
	tests := []struct {
		name   string
		groups []flagGroup
		want   string
	}{
		{"each once", []flagGroup{{"A", []string{"a"}}, {"B", []string{"b"}}}, ""},
		{"missing", []flagGroup{{"A", []string{"a"}}}, "--b is in 0 groups"},
		{"twice", []flagGroup{{"A", []string{"a", "b"}}, {"B", []string{"b"}}}, "--b is in 2 groups"},
		{"unknown", []flagGroup{{"A", []string{"a", "b", "c"}}}, "names --c, which is not a flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkGroups(fs, tt.groups)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWrapAndDefaults(t *testing.T) {
	for _, tt := range []struct{ in, want string }{{"3m0s", "3m"}, {"1h0m0s", "1h"}, {"2s", "2s"}, {"1m30s", "1m30s"}, {"10ms", "10ms"}} {
		if got := shortDuration(tt.in); got != tt.want {
			t.Errorf("shortDuration(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, line := range wrap(strings.Repeat("word ", 50), 30) {
		if len(line) > 30 {
			t.Errorf("wrap: line %q longer than 30", line)
		}
	}
}

// TestTopLevelHelp: 'wafbench --help' names every command, in the order
// of the commands table.
func TestTopLevelHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, c := range commands {
		i := strings.Index(stdout.String()[at:], "\n  "+c.name+" ")
		if i < 0 {
			t.Errorf("command %s missing from the help, or out of order", c.name)
			continue
		}
		at += i + 1
	}
}
