//go:build integration

package report

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestHTMLInBrowser loads the report.html of the synthetic run in headless
// Chromium: the page must load without console errors or exceptions, every
// chart must be decoded with a non-zero size, no request may leave the
// machine, and a click on a column head must sort its table.
func TestHTMLInBrowser(t *testing.T) {
	exe := chromium(t)
	dir := copyRun(t)
	if err := Build(dir, nil); err != nil {
		t.Fatal(err)
	}
	charts, _ := filepath.Glob(filepath.Join(dir, ChartsDir, "*.svg"))
	if len(charts) == 0 {
		t.Fatal("the synthetic run has no charts")
	}
	page, err := filepath.Abs(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}

	// A bound on a hung browser, not a pass/fail timing.
	bound, cancelBound := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancelBound()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 1000), chromedp.Flag("user-data-dir", t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(bound, opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()

	msgs := chromedp.Console(ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatalf("load %s: %v", page, err)
	}
	infos, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartInfo](chartsJS))
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != len(charts) {
		t.Errorf("page shows %d charts, the run has %d", len(infos), len(charts))
	}
	for _, c := range infos {
		if !c.Complete || c.NaturalWidth == 0 || c.NaturalHeight == 0 || c.Width == 0 || c.Height == 0 {
			t.Errorf("chart %s: not drawn: %+v", c.Href, c)
		}
	}
	external, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`performance.getEntriesByType("resource").map(function(e){return e.name;}).filter(function(n){return !/^(file|data):/.test(n);})`))
	if err != nil {
		t.Fatal(err)
	}
	if len(external) > 0 {
		t.Errorf("page requested %q", external)
	}
	sorted, err := chromedp.Run(ctx, chromedp.Evaluate[struct{ Up, Down []float64 }](sortCheckJS))
	if err != nil {
		t.Fatal(err)
	}
	if len(sorted.Up) < 2 || !slices.IsSorted(sorted.Up) {
		t.Errorf("after one click the req/s column is %v, want ascending", sorted.Up)
	}
	down := slices.Clone(sorted.Down)
	slices.Reverse(down)
	if !slices.IsSorted(down) || slices.Equal(sorted.Up, sorted.Down) {
		t.Errorf("after two clicks the req/s column is %v, want descending", sorted.Down)
	}

	// The end marker is the last message; everything before it is the page's.
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[chromedp.Void](`console.debug("wafbench-test-end")`)(ctx, tg)
		return err
	})); err != nil {
		t.Fatal(err)
	}
	for m, err := range msgs {
		if err != nil {
			t.Fatal(err)
		}
		if m.Text == "wafbench-test-end" {
			break
		}
		if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
			t.Errorf("console: %s", m)
		}
	}
}

// chartInfo is what the page reports about one inlined chart.
type chartInfo struct {
	Href          string  `json:"href"`
	Complete      bool    `json:"complete"`
	NaturalWidth  float64 `json:"naturalWidth"`
	NaturalHeight float64 `json:"naturalHeight"`
	Width         float64 `json:"width"`
	Height        float64 `json:"height"`
}

const chartsJS = `Array.from(document.querySelectorAll("a.chart")).map(function(a){
  var img=a.querySelector("img"), r=img.getBoundingClientRect();
  return {href:a.getAttribute("href"),complete:img.complete,naturalWidth:img.naturalWidth,naturalHeight:img.naturalHeight,width:r.width,height:r.height};
})`

// sortJS clicks the head of the req/s column of the first results table
// twice and returns the column after each click.
const sortCheckJS = `(function(){
  var table=Array.from(document.querySelectorAll("table")).find(function(t){
    return t.tHead && Array.from(t.tHead.rows[0].cells).some(function(c){return c.textContent==="req/s";});
  });
  var col=Array.from(table.tHead.rows[0].cells).findIndex(function(c){return c.textContent==="req/s";});
  function column(){return Array.from(table.tBodies[0].rows).map(function(r){return parseFloat(r.cells[col].textContent);});}
  table.tHead.rows[0].cells[col].click();
  var up=column();
  table.tHead.rows[0].cells[col].click();
  return {up:up,down:column()};
})()`
