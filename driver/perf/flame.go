package perf

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"wafbench/internal/atomicfile"
)

// Flame graphs are drawn by inferno (github.com/jonhoo/inferno, from
// crates.io), a maintained Rust port of Brendan Gregg's FlameGraph tools:
// inferno-collapse-perf folds `perf script` output into one line per
// distinct stack, inferno-flamegraph draws folded stacks as an SVG, and
// inferno-diff-folded pairs two folded profiles for a differential flame
// graph. ./scripts/setup.sh installs them into build/bin.
const (
	collapseTool = "inferno-collapse-perf"
	flameTool    = "inferno-flamegraph"
	diffTool     = "inferno-diff-folded"
	infernoHint  = "install inferno (./scripts/setup.sh does: cargo install inferno --root build, into build/bin)"
)

// tool returns the path of an inferno tool: from PATH, else from bin/
// beside the running executable (build/wafbench finds build/bin), else from
// build/bin of the enclosing wafbench module (tests).
func tool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Join(filepath.Dir(exe), "bin"))
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module wafbench\n")) {
				dirs = append(dirs, filepath.Join(d, "build", "bin"))
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: %s", name, infernoHint)
}

// FlameAvailable reports whether the inferno tools that draw flame graphs
// can be found, with the package and set-up command when not.
func FlameAvailable() error {
	for _, t := range []string{collapseTool, flameTool, diffTool} {
		if _, err := tool(t); err != nil {
			return err
		}
	}
	return nil
}

// fold writes the folded stacks of a perf.data file to out: `perf script`
// piped into inferno-collapse-perf. Symbols are resolved now, while the
// profiled binaries and shared objects (the Go module's .so is built
// unstripped) are where perf recorded them.
func fold(data, out string) error {
	collapse, err := tool(collapseTool)
	if err != nil {
		return err
	}
	script := exec.Command("perf", "script", "-i", data)
	fold := exec.Command(collapse)
	var scriptErr, foldErr, folded bytes.Buffer
	script.Stderr, fold.Stderr, fold.Stdout = &scriptErr, &foldErr, &folded
	pipe, err := script.StdoutPipe()
	if err != nil {
		return err
	}
	fold.Stdin = pipe
	if err := script.Start(); err != nil {
		return fmt.Errorf("perf script %s: %w", data, err)
	}
	if err := fold.Start(); err != nil {
		script.Process.Kill()
		script.Wait()
		return fmt.Errorf("%s: %w", collapseTool, err)
	}
	ferr := fold.Wait()
	serr := script.Wait()
	if serr != nil {
		return fmt.Errorf("perf script %s: %w: %s", data, serr, lastLine(scriptErr.Bytes()))
	}
	if ferr != nil {
		return fmt.Errorf("%s of %s: %w: %s", collapseTool, data, ferr, lastLine(foldErr.Bytes()))
	}
	// No samples (a window shorter than perf's first tick) leaves an
	// empty file: the window had no profile, which is not an error.
	return atomicfile.WriteFile(out, folded.Bytes())
}

func lastLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}

// Folded is a profile in folded form: weight by stack, the frames of a
// stack joined by ';' from the root to the leaf. inferno-collapse-perf
// weighs each sample by its event period, so with cpu-clock the weights
// are nanoseconds of CPU (about 1e9/Hz per sample).
type Folded map[string]int64

// ReadFolded reads a folded-stacks file (one "stack count" line each),
// gzip-compressed when its name ends in .gz.
func ReadFolded(path string) (Folded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	out := Folded{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		if l == "" {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		n, err := strconv.ParseInt(l[i+1:], 10, 64)
		if i <= 0 || err != nil || n < 0 {
			return nil, fmt.Errorf("%s:%d: want \"stack count\", got %q", path, line, l)
		}
		out[l[:i]] += n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Add adds g's samples to f.
func (f Folded) Add(g Folded) {
	for s, n := range g {
		f[s] += n
	}
}

// Total returns the sum of the weights.
func (f Folded) Total() int64 {
	var t int64
	for _, n := range f {
		t += n
	}
	return t
}

// Scale returns f with every count multiplied by k and rounded; stacks that
// round to zero are dropped.
func (f Folded) Scale(k float64) Folded {
	out := make(Folded, len(f))
	for s, n := range f {
		if v := int64(math.Round(float64(n) * k)); v > 0 {
			out[s] = v
		}
	}
	return out
}

// Write writes f as a folded-stacks file, stacks sorted.
func (f Folded) Write(path string) error {
	keys := make([]string, 0, len(f))
	for s := range f {
		keys = append(keys, s)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	for _, s := range keys {
		fmt.Fprintf(&b, "%s %d\n", s, f[s])
	}
	return atomicfile.WriteFile(path, b.Bytes())
}

// funcShare is one function's share of a profile's samples.
type funcShare struct {
	Name    string
	Self    int64   // weight of the stacks with the function as the leaf
	SelfPct float64 // Self as a percentage of the profile's total
}

// Top returns the n functions with the most self weight (leaf frames),
// most first, ties by name.
func (f Folded) Top(n int) []funcShare {
	self := map[string]int64{}
	for s, c := range f {
		leaf := s
		if i := strings.LastIndexByte(s, ';'); i >= 0 {
			leaf = s[i+1:]
		}
		self[leaf] += c
	}
	total := f.Total()
	out := make([]funcShare, 0, len(self))
	for name, c := range self {
		out = append(out, funcShare{Name: name, Self: c, SelfPct: 100 * float64(c) / float64(max(total, 1))})
	}
	slices.SortFunc(out, func(a, b funcShare) int {
		if c := cmp.Compare(b.Self, a.Self); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out[:min(n, len(out))]
}

// flameArgs are inferno-flamegraph's options for every graph. --minwidth
// leaves out frames narrower than 0.1% of the graph (about one pixel of its
// 1200): inferno's default, 0.01%, kept thousands of invisible frames and
// made a graph of Coraza five times the size, against the committed
// results' size budget (driver/keep TestResultsSize).
func flameArgs(title string) []string {
	return []string{"--deterministic", "--minwidth", "0.1", "--title", title, "--countname", "ns"}
}

// Flamegraph draws the folded-stacks file folded as an SVG flame graph.
func Flamegraph(folded, svg, title string) error {
	tool, err := tool(flameTool)
	if err != nil {
		return err
	}
	return render(svg, exec.Command(tool, append(flameArgs(title), folded)...))
}

// DiffFlamegraph draws a differential flame graph from before to after
// (folded-stacks files): the frames and widths of after, coloured by the
// change from before (red grew, blue shrank). Scale both to the same
// amount of work first (see Folded.Scale), or the colours show the
// difference in totals.
func DiffFlamegraph(before, after, svg, title string) error {
	diff, err := tool(diffTool)
	if err != nil {
		return err
	}
	tool, err := tool(flameTool)
	if err != nil {
		return err
	}
	var pairs, stderr bytes.Buffer
	cmd := exec.Command(diff, before, after)
	cmd.Stdout, cmd.Stderr = &pairs, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s %s: %w: %s", diffTool, before, after, err, lastLine(stderr.Bytes()))
	}
	draw := exec.Command(tool, flameArgs(title)...)
	draw.Stdin = &pairs
	return render(svg, draw)
}

// render runs an inferno-flamegraph command and writes its SVG to svg.
func render(svg string, cmd *exec.Cmd) error {
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("%s for %s: %w: %s", flameTool, svg, err, lastLine(stderr.Bytes()))
		}
		return fmt.Errorf("%s: %w", flameTool, err)
	}
	return atomicfile.WriteFile(svg, out.Bytes())
}
