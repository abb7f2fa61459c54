package conformance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"wafbench/internal/crs"
)

// idPattern finds a rule ID in a log line: the modules' `wafbench-match
// [id "942100"]` and nginx's `ModSecurity: Warning. … [id "942100"]` alike
// (go-ftw's expression, which also accepts the escaped quotes of a JSON log).
var idPattern = regexp.MustCompile(`\[id \\?"(\d+)\\?"\]`)

// iDs returns the rule IDs of lines, in order of first appearance.
func iDs(lines []string) []uint {
	var out []uint
	seen := map[uint]bool{}
	for _, l := range lines {
		for _, m := range idPattern.FindAllStringSubmatch(l, -1) {
			n, err := strconv.ParseUint(m[1], 10, 32)
			if err != nil || seen[uint(n)] {
				continue
			}
			seen[uint(n)] = true
			out = append(out, uint(n))
		}
	}
	return out
}

// isMarker reports whether line is the marker rule's report of marker.
func isMarker(line, marker string) bool {
	return strings.Contains(line, `[id "`+strconv.Itoa(crs.MarkerRuleID)+`"]`) && strings.Contains(line, marker)
}

// logTail follows a host's log file from where it was when opened.
type logTail struct {
	path    string
	f       *os.File
	partial []byte
	buf     []byte   // read's buffer, kept between reads
	lines   []string // complete lines not yet consumed
	last    []string // the lines before the last marker found (mark)
}

func openTail(path string) (*logTail, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("host log: %w", err)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, err
	}
	return &logTail{path: path, f: f}, nil
}

func (t *logTail) Close() { t.f.Close() }

// read appends what the host wrote since the last read.
func (t *logTail) read() error {
	if t.buf == nil {
		t.buf = make([]byte, 64<<10)
	}
	for {
		n, err := t.f.Read(t.buf)
		if n > 0 {
			t.partial = append(t.partial, t.buf[:n]...)
			for {
				i := bytes.IndexByte(t.partial, '\n')
				if i < 0 {
					break
				}
				t.lines = append(t.lines, string(t.partial[:i]))
				t.partial = t.partial[i+1:]
			}
		}
		if err == io.EOF || n == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// errNoMarker is a marker the host did not log within the wait.
var errNoMarker = fmt.Errorf("marker not logged")

// until waits for the marker's line and returns the lines logged before
// it since the previous call; the marker line itself is consumed. It polls
// the file: the marker line is the explicit signal, the wait only bounds it.
func (t *logTail) until(ctx context.Context, marker string, wait time.Duration) ([]string, error) {
	deadline := time.Now().Add(wait)
	scanned := 0
	for {
		if err := t.read(); err != nil {
			return nil, err
		}
		for i := scanned; i < len(t.lines); i++ {
			if isMarker(t.lines[i], marker) {
				before := t.lines[:i:i]
				t.lines = t.lines[i+1:]
				return before, nil
			}
		}
		scanned = len(t.lines)
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w (%s) within %s in %s", errNoMarker, marker, wait, t.path)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}
