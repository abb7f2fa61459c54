//go:build integration

package report

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wafbench/internal/repopath"
)

// pageWidth is the browser window width the first screen must fit, px.
const pageWidth = 1280

// tableFit is what the page reports about one table of the first screen.
type tableFit struct {
	Section     string  `json:"section"`
	Head        string  `json:"head"`
	ScrollWidth float64 `json:"scrollWidth"`
	ClientWidth float64 `json:"clientWidth"`
}

// openingTablesJS lists the tables of the sections a reader sees first —
// the verdicts in brief and the headline — with their widths, and the
// page's own width.
const openingTablesJS = `(function(){
  var sections={"in-brief":true,"headline":true}, section="", out=[];
  document.querySelectorAll("main > h2, main > table").forEach(function(e){
    if(e.tagName==="H2"){section=e.id;return;}
    if(sections[section])out.push({section:section,head:e.tHead?e.tHead.rows[0].textContent.slice(0,60):"",
      scrollWidth:e.scrollWidth,clientWidth:e.clientWidth});
  });
  return {tables:out,pageScroll:document.documentElement.scrollWidth,pageClient:document.documentElement.clientWidth};
})()`

// TestOpeningTablesFit renders every committed run's report.html in
// headless Chromium 1280 px wide and fails when a table of its first
// screen (In brief, Headline) is wider than the page, so that it would
// scroll sideways, or when the page itself does.
func TestOpeningTablesFit(t *testing.T) {
	exe := chromium(t)
	root, err := repopath.Root()
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "results", "*", HTMLFile))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no committed run has a %s (%v)", HTMLFile, err)
	}

	// A bound on a hung browser, not a pass/fail timing.
	bound, cancelBound := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancelBound()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(pageWidth, 1000), chromedp.Flag("user-data-dir", t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(bound, opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()

	checked := 0
	for _, page := range pages {
		run := filepath.Base(filepath.Dir(page))
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page)); err != nil {
			t.Fatalf("%s: load: %v", run, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
			Tables     []tableFit
			PageScroll float64
			PageClient float64
		}](openingTablesJS))
		if err != nil {
			t.Fatalf("%s: %v", run, err)
		}
		if got.PageClient > pageWidth || got.PageClient < pageWidth-40 {
			t.Fatalf("%s: the page is %.0f px wide, want about %d (window size not applied)", run, got.PageClient, pageWidth)
		}
		if got.PageScroll > got.PageClient {
			t.Errorf("%s: the page scrolls sideways (%.0f px of content in %.0f px)", run, got.PageScroll, got.PageClient)
		}
		for _, tb := range got.Tables {
			checked++
			if tb.ScrollWidth > tb.ClientWidth+1 {
				t.Errorf("%s: a table of %q (%q…) scrolls sideways at %d px: %.0f px of content in %.0f px",
					run, tb.Section, tb.Head, pageWidth, tb.ScrollWidth, tb.ClientWidth)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no committed report has a table in In brief or Headline: nothing checked")
	}
}
