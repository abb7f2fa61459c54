package chart

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"

	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// affine is a 2-D affine transform: x' = a·x + c·y + e, y' = b·x + d·y + f.
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, d: 1}

// then returns m followed, in m's local coordinates, by n (m · n).
func (m affine) then(n affine) affine {
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

// textBox is the box one drawn string covers on the page, from the font's
// metrics (advance width, ascent, descent), in points.
type textBox struct {
	text                   string
	minX, minY, maxX, maxY float64
}

func (b textBox) String() string {
	return fmt.Sprintf("%q [%.1f,%.1f]-[%.1f,%.1f]", b.text, b.minX, b.minY, b.maxX, b.maxY)
}

// recorder is a canvas that draws through to another and records the box
// of every string drawn, following the canvas's transforms.
type recorder struct {
	vg.CanvasWriterTo
	m     affine
	stack []affine
	boxes []textBox
}

func (r *recorder) Push() { r.stack = append(r.stack, r.m); r.CanvasWriterTo.Push() }

func (r *recorder) Pop() {
	r.m, r.stack = r.stack[len(r.stack)-1], r.stack[:len(r.stack)-1]
	r.CanvasWriterTo.Pop()
}

func (r *recorder) Translate(pt vg.Point) {
	r.m = r.m.then(affine{a: 1, d: 1, e: float64(pt.X), f: float64(pt.Y)})
	r.CanvasWriterTo.Translate(pt)
}

func (r *recorder) Rotate(rad float64) {
	s, c := math.Sincos(rad)
	r.m = r.m.then(affine{a: c, b: s, c: -s, d: c})
	r.CanvasWriterTo.Rotate(rad)
}

func (r *recorder) Scale(x, y float64) {
	r.m = r.m.then(affine{a: x, d: y})
	r.CanvasWriterTo.Scale(x, y)
}

func (r *recorder) FillString(f font.Face, pt vg.Point, s string) {
	r.CanvasWriterTo.FillString(f, pt, s)
	if f.Font.Size == 0 || strings.TrimSpace(s) == "" {
		return
	}
	e := f.Extents()
	x0, x1 := float64(pt.X), float64(pt.X+f.Width(s))
	y0, y1 := float64(pt.Y-e.Descent), float64(pt.Y+e.Ascent)
	b := textBox{text: s, minX: math.Inf(1), minY: math.Inf(1), maxX: math.Inf(-1), maxY: math.Inf(-1)}
	for _, c := range [][2]float64{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
		x, y := r.m.apply(c[0], c[1])
		b.minX, b.maxX = math.Min(b.minX, x), math.Max(b.maxX, x)
		b.minY, b.maxY = math.Min(b.minY, y), math.Max(b.maxY, y)
	}
	r.boxes = append(r.boxes, b)
}

// overlapTolerance is how far, in points, two boxes may run into each other
// (rounding of font metrics) before they count as overlapping.
const overlapTolerance = 0.5

// problems lists the text boxes of r that overlap each other or leave the
// canvas.
func (r *recorder) problems() []string {
	var out []string
	w, h := r.Size()
	for i, a := range r.boxes {
		if a.minX < -overlapTolerance || a.minY < -overlapTolerance || a.maxX > float64(w)+overlapTolerance || a.maxY > float64(h)+overlapTolerance {
			out = append(out, fmt.Sprintf("%v leaves the %.0f×%.0f canvas", a, float64(w), float64(h)))
		}
		for _, b := range r.boxes[i+1:] {
			ox := math.Min(a.maxX, b.maxX) - math.Max(a.minX, b.minX)
			oy := math.Min(a.maxY, b.maxY) - math.Max(a.minY, b.minY)
			if ox > overlapTolerance && oy > overlapTolerance {
				out = append(out, fmt.Sprintf("%v overlaps %v", a, b))
			}
		}
	}
	return out
}

// recordCanvases makes every chart drawn until the test ends record its
// text boxes; the returned function lists the recorders made so far.
func recordCanvases(t *testing.T) func() []*recorder {
	var recs []*recorder
	old := newCanvas
	newCanvas = func(w, h vg.Length) vg.CanvasWriterTo {
		r := &recorder{CanvasWriterTo: old(w, h), m: identity}
		recs = append(recs, r)
		return r
	}
	t.Cleanup(func() { newCanvas = old })
	return func() []*recorder { return recs }
}

// checkNoOverlap renders every chart of recs (WriteAll, so charts added to
// it later are checked too) and fails on text that overlaps other text or
// leaves its canvas.
func checkNoOverlap(t *testing.T, recs []result.Record) {
	t.Helper()
	got := recordCanvases(t)
	files, err := WriteAll(t.TempDir(), stats.Summarize(recs), recs)
	if err != nil {
		t.Fatal(err)
	}
	rs := got()
	if len(rs) != len(files) {
		t.Fatalf("%d canvases for %d chart files %v", len(rs), len(files), files)
	}
	for i, r := range rs {
		if len(r.boxes) == 0 {
			t.Errorf("%s: no text recorded", files[i])
		}
		for _, p := range r.problems() {
			t.Errorf("%s: %s", files[i], p)
		}
	}
}

// drawnInTests records every chart any test of this package draws.
var drawnInTests []*recorder

// TestMain checks, after all tests ran, that no chart drawn by any of them
// (goldens of every chart type included) has overlapping or clipped text.
func TestMain(m *testing.M) {
	base := newCanvas
	newCanvas = func(w, h vg.Length) vg.CanvasWriterTo {
		r := &recorder{CanvasWriterTo: base(w, h), m: identity}
		drawnInTests = append(drawnInTests, r)
		return r
	}
	code := m.Run()
	if code == 0 {
		for i, r := range drawnInTests {
			title := ""
			if len(r.boxes) > 0 {
				title = r.boxes[0].text
			}
			for _, p := range r.problems() {
				fmt.Fprintf(os.Stderr, "chart %d drawn in the tests (first text %q): %s\n", i, title, p)
				code = 1
			}
		}
		if code != 0 {
			fmt.Fprintln(os.Stderr, "FAIL: overlapping or clipped text in charts drawn by the tests")
		}
	}
	os.Exit(code)
}

func TestNoOverlappingText(t *testing.T) {
	checkNoOverlap(t, records())
}

// TestNoOverlappingTextCommittedRuns draws the charts of every run committed
// under results/ (real data: many modes, long names, wide ranges).
func TestNoOverlappingTextCommittedRuns(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "results", "*", result.RawFile+"*")) // raw.jsonl.gz in the kept form
	if len(dirs) == 0 {
		t.Fatal("no committed runs under results/ (want results/<run>/raw.jsonl)")
	}
	for _, raw := range dirs {
		dir := filepath.Dir(raw)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			recs, _, err := result.ReadRecords(dir)
			if err != nil {
				t.Fatal(err)
			}
			checkNoOverlap(t, recs)
		})
	}
}

// TestOverlapDetected checks the checker: two strings drawn at the same
// place, one rotated across another, and one off the canvas are reported.
func TestOverlapDetected(t *testing.T) {
	// Not through newCanvas: TestMain would count these deliberate overlaps.
	r := &recorder{CanvasWriterTo: vgsvg.New(100, 100), m: identity}
	c := vg.CanvasWriterTo(r)
	f := noteStyle()
	face := plot.DefaultTextHandler.(text.Plain).Fonts.Lookup(f.Font, 10)
	c.FillString(face, vg.Point{X: 10, Y: 10}, "first")
	c.FillString(face, vg.Point{X: 14, Y: 12}, "second")
	c.Push()
	c.Translate(vg.Point{X: 60, Y: 40})
	c.Rotate(math.Pi / 2)
	c.FillString(face, vg.Point{}, "rotated")
	c.Pop()
	c.FillString(face, vg.Point{X: 50, Y: 55}, "across")
	c.FillString(face, vg.Point{X: 95, Y: 90}, "outside")
	if _, err := c.WriteTo(&strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	probs := r.problems()
	want := []string{`"first"`, `"rotated"`, `"outside"`}
	for _, w := range want {
		found := false
		for _, p := range probs {
			found = found || strings.HasPrefix(p, w)
		}
		if !found {
			t.Errorf("no problem reported for %s; got %q", w, probs)
		}
	}
	if len(probs) != 3 {
		t.Errorf("got %d problems, want 3: %q", len(probs), probs)
	}
}
