// Package matrix sends a named request corpus to every requested mode —
// Envoy modes, engine builds and reference hosts, each started as a trial
// starts it (driver/runner.Session: fresh process, pinned, preflighted) —
// and records each mode's verdict on each request: matrix.csv (one row per
// mode × request) and matrix.md (where a verdict differs from the expected
// one, and where modes disagree with each other).
package matrix

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"wafbench/driver/modes"
	"wafbench/driver/runner"
	"wafbench/internal/atomicfile"
)

// File names written into a run directory.
const (
	csvFile      = "matrix.csv"
	MarkdownFile = "matrix.md"
)

// header is matrix.csv's header row.
var header = []string{"mode", "engine", "build", "case", "class", "method", "path", "expected", "observed", "latency_us", "error"}

// row is one request of the corpus sent to one mode.
type row struct {
	Mode      string
	Engine    string // "" for a mode without a WAF
	Build     string // the engine build (a mode name such as coraza@re2); "" without one
	Case      string
	Class     string
	Method    string
	Path      string // request-target as sent, shortened past MaxPath bytes
	Expected  int    // 0: the corpus says nothing for this mode
	Observed  int    // 0: no response (Error says why)
	LatencyUs int64  // connect to last response byte
	Error     string
}

// maxPath is the longest request-target a row keeps whole; longer ones are
// cut and marked with their length.
const maxPath = 160

// result is a finished matrix.
type result struct {
	Corpus string
	Modes  []string // in the order they ran
	Rows   []row    // mode-major, corpus order within a mode
	// Failed holds the modes that could not be started or preflighted,
	// with why; they have no rows.
	Failed map[string]string
	Notes  map[string]string // corpus notes, by case
	// BuildNotes holds why a build answers a case differently, by build
	// then case.
	BuildNotes map[string]map[string]string
}

// timeout bounds each request (connect, write, whole response).
const timeout = 10 * time.Second

// run starts each mode of ms in turn through sess, sends every request of
// c on a connection of its own, and stops the mode. A mode that fails to
// start or preflight is recorded in Result.Failed and the others still run;
// run returns an error only when ctx ends it.
func run(ctx context.Context, sess *runner.Session, c *Corpus, ms []modes.Mode) (*result, error) {
	res := &result{Corpus: c.Name, Failed: map[string]string{}, Notes: c.Notes, BuildNotes: map[string]map[string]string{}}
	for b, byCase := range c.ByBuild {
		res.BuildNotes[b] = map[string]string{}
		for n, d := range byCase {
			res.BuildNotes[b][n] = strings.TrimSpace(d.Reason)
		}
	}
	for _, m := range ms {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		mode := m.String()
		res.Modes = append(res.Modes, mode)
		build := ""
		if m.Build != nil {
			build = m.Build.Mode()
		}
		h, err := sess.Start(ctx, mode, "matrix-"+strings.ReplaceAll(mode, "@", "_"))
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.Failed[mode] = err.Error()
			continue
		}
		for i := range c.Entries {
			e := &c.Entries[i]
			row := row{Mode: mode, Engine: modes.Engine(mode), Build: build, Case: e.Name, Class: e.Class,
				Method: e.Method, Expected: c.expected(e, mode, build)}
			raw, err := e.raw()
			if err != nil {
				h.Stop()
				return res, fmt.Errorf("corpus %s: %s: %v", c.Name, e.Name, err)
			}
			_, target, _, _, _ := e.Parts()
			row.Path = shorten(target)
			row.Observed, row.LatencyUs, err = send(ctx, h.Addr, e.Method, raw)
			if err != nil {
				if ctx.Err() != nil {
					h.Stop()
					return res, ctx.Err()
				}
				row.Error = err.Error()
			}
			res.Rows = append(res.Rows, row)
		}
		h.Stop()
	}
	return res, nil
}

func shorten(target string) string {
	if len(target) <= maxPath {
		return target
	}
	return target[:maxPath] + "…(" + strconv.Itoa(len(target)) + " bytes)"
}

// send writes raw on a fresh connection to addr while reading the response
// (a WAF may answer before it has read a large body), reads the whole
// response and returns its status and the time from connect to its last
// byte, in microseconds.
func send(ctx context.Context, addr, method string, raw []byte) (status int, latencyUs int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	werr := make(chan error, 1)
	go func() {
		_, err := conn.Write(raw)
		werr <- err
	}()
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 64<<10), &http.Request{Method: method})
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			err = fmt.Errorf("reading body of %d response: %w", resp.StatusCode, err)
		}
	}
	elapsed := time.Since(start)
	conn.Close() // ends a write the server stopped reading
	we := <-werr
	if err != nil {
		if we != nil {
			return 0, 0, fmt.Errorf("%v (write: %v)", err, we)
		}
		return 0, 0, err
	}
	return resp.StatusCode, elapsed.Microseconds(), nil
}

// writeCSV writes rows with Header first.
func writeCSV(w io.Writer, rows []row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{r.Mode, r.Engine, r.Build, r.Case, r.Class, r.Method, r.Path,
			strconv.Itoa(r.Expected), strconv.Itoa(r.Observed), strconv.FormatInt(r.LatencyUs, 10), r.Error}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// readCSV parses what WriteCSV wrote. The header must be Header.
func readCSV(r io.Reader) ([]row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(header)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("matrix csv header: %w", err)
	}
	if strings.Join(head, ",") != strings.Join(header, ",") {
		return nil, fmt.Errorf("matrix csv header: want %s, got %s", strings.Join(header, ","), strings.Join(head, ","))
	}
	var rows []row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("matrix csv: %w", err)
		}
		r := row{Mode: rec[0], Engine: rec[1], Build: rec[2], Case: rec[3], Class: rec[4], Method: rec[5], Path: rec[6], Error: rec[10]}
		var ints [3]int64
		for i, name := range []string{"expected", "observed", "latency_us"} {
			if ints[i], err = strconv.ParseInt(rec[7+i], 10, 64); err != nil {
				return nil, fmt.Errorf("matrix csv line %d: %s: want an integer, got %q", line, name, rec[7+i])
			}
		}
		r.Expected, r.Observed, r.LatencyUs = int(ints[0]), int(ints[1]), ints[2]
		rows = append(rows, r)
	}
}

// writeFiles writes matrix.csv and matrix.md into dir.
func (r *result) writeFiles(dir string) error {
	var b strings.Builder
	if err := writeCSV(&b, r.Rows); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, csvFile), []byte(b.String())); err != nil {
		return err
	}
	var m strings.Builder
	r.writeMarkdown(&m)
	return atomicfile.WriteFile(filepath.Join(dir, MarkdownFile), []byte(m.String()))
}

// readFile reads a matrix.csv.
func readFile(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := readCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}
