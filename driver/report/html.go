package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// HTMLFile is report.md rendered as one web page that needs nothing but the
// run directory it sits in.
const HTMLFile = "report.html"

// writeHTML renders md, the Markdown report of a run, as one HTML page
// that needs no network: GitHub-flavoured Markdown (goldmark with its GFM
// tables), every image that is a local SVG or PNG file of the run shown
// from that file by its path relative to the run directory (not inlined:
// the run directory holds the charts already, and a committed run would
// carry each twice), tables sortable by a click on their head (inline
// script, no network), and a list of the run's files (raw records,
// metadata, logs, profiles and flame graphs) linked relative to the run
// directory. files are the run's regular files (Figures.Files). Rendering
// from report.md keeps the two reports' content identical. The output
// depends only on md and files.
func writeHTML(w io.Writer, md []byte, files []string) error {
	have := map[string]bool{}
	for _, f := range files {
		have[f] = true
	}
	gm := goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(&inlineImages{files: have}, 1))),
	)
	doc := gm.Parser().Parse(text.NewReader(md))
	var body bytes.Buffer
	if err := gm.Renderer().Render(&body, md, doc); err != nil {
		return fmt.Errorf("render %s: %w", ReportFile, err)
	}
	// A table cell's line break is no content: the longest reports hold
	// 10⁵ cells, and results/ has a size budget.
	cells := bytes.ReplaceAll(bytes.ReplaceAll(body.Bytes(), []byte("</td>\n"), []byte("</td>")), []byte("</th>\n"), []byte("</th>"))
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n", html.EscapeString(firstHeading(doc, md)), pageCSS)
	b.Write(cells)
	b.WriteString("</main>\n")
	if listed := footerFiles(files); len(listed) > 0 {
		b.WriteString("<footer>\n<h2 id=\"files-of-this-run\">Files of this run</h2>\n<ul class=\"files\">\n")
		for _, f := range listed {
			fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(relURL(f)), html.EscapeString(f))
		}
		b.WriteString("</ul>\n</footer>\n")
	}
	fmt.Fprintf(&b, "<script>%s</script>\n</body>\n</html>\n", sortJS)
	_, err := w.Write(b.Bytes())
	return err
}

// firstHeading is the text of the first level-1 heading, or "wafbench
// report".
func firstHeading(doc ast.Node, src []byte) string {
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && h.Level == 1 {
			return plainText(h, src)
		}
	}
	return "wafbench report"
}

// plainText concatenates the text segments under n.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Segment.Value(src))
		}
		if s, ok := c.(*ast.String); ok && entering {
			b.Write(s.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// relURL escapes a slash-separated relative path for an href.
func relURL(p string) string {
	return (&url.URL{Path: p}).EscapedPath()
}

// localFile reports whether dest, an image or link destination in the
// report, names one of files (a regular file of the run); false for URLs,
// absolute paths and paths leaving the run directory.
func localFile(files map[string]bool, dest string) bool {
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" || path.IsAbs(u.Path) {
		return false
	}
	clean := path.Clean(u.Path)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return false
	}
	return files[clean]
}

// inlineImages renders images whose destination is a local SVG or PNG file
// of the run inside a link to the file; other images as plain <img>.
type inlineImages struct{ files map[string]bool }

func (r *inlineImages) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, r.render)
}

func (r *inlineImages) render(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	dest := string(n.Destination)
	alt := html.EscapeString(plainText(n, src))
	mime := map[string]string{".svg": "image/svg+xml", ".png": "image/png"}[strings.ToLower(path.Ext(dest))]
	if localFile(r.files, dest) && mime != "" {
		d := html.EscapeString(dest)
		fmt.Fprintf(w, "<a class=\"chart\" href=\"%s\"><img src=\"%s\" alt=\"%s\"></a>", d, d, alt)
		return ast.WalkSkipChildren, nil
	}
	// Not a file of the run: keep only plain relative or http(s) sources.
	src2 := dest
	if u, err := url.Parse(dest); err != nil || (u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https") {
		src2 = ""
	}
	fmt.Fprintf(w, "<img src=\"%s\" alt=\"%s\">", html.EscapeString(src2), alt)
	return ast.WalkSkipChildren, nil
}

// footerFiles are the files of the run a reader may want to open, from
// files (slash-separated, sorted): everything except the HTML report
// itself, the chart SVGs (already inline), files in hidden directories,
// hidden files and temporary files.
func footerFiles(files []string) []string {
	var out []string
	for _, rel := range files {
		dirs, name := path.Split(rel)
		switch {
		case rel == HTMLFile, strings.HasPrefix(rel, ChartsDir+"/"), strings.HasPrefix(name, "."), strings.HasSuffix(name, ".tmp"),
			strings.HasPrefix(dirs, ".") || strings.Contains(dirs, "/."):
			continue
		}
		out = append(out, rel)
	}
	return out
}

// pageCSS styles the page: readable width, tables with sticky heads whose
// cells wrap (a head or a row's name anywhere, other cells between words)
// so that a table fits the page where it can and scrolls by itself where it
// cannot; tables that follow one another side by side where they fit
// (the narrow tables that open the report); charts at most as wide as the
// page.
const pageCSS = `
body{font:15px/1.5 -apple-system,"Segoe UI","Liberation Sans",Helvetica,Arial,sans-serif;color:#1f2328;margin:0;background:#fff}
main,footer{max-width:1200px;margin:0 auto;padding:0 24px}
footer{border-top:1px solid #d0d7de;margin-top:32px;padding-bottom:32px}
h1,h2{border-bottom:1px solid #d0d7de;padding-bottom:.3em}
code{font-family:"Liberation Mono",Menlo,Consolas,monospace;font-size:85%;background:#f6f8fa;padding:.1em .3em;border-radius:4px}
table{border-collapse:collapse;margin:12px 12px 12px 0;display:inline-block;vertical-align:top;overflow-x:auto;max-width:100%}
th,td{border:1px solid #d0d7de;padding:4px 10px;text-align:left}
th,td:first-child{overflow-wrap:anywhere}
tr:nth-child(2n) td{background:#f6f8fa}
th{background:#eef1f4;cursor:pointer;user-select:none;position:sticky;top:0}
th[aria-sort=ascending]::after{content:" \25B2"}
th[aria-sort=descending]::after{content:" \25BC"}
a.chart{display:block;margin:16px 0}
a.chart img,img{max-width:100%;height:auto;border:1px solid #d0d7de}
ul.files{columns:3 240px;font-size:13px}
`

// sortJS makes every table sortable by a click on a head cell: numbers (the
// first number in a cell, ignoring signs like ± and units) sort
// numerically, other cells as text; a second click reverses.
const sortJS = `
(function(){
  function key(td){
    var t=td.textContent.trim();
    var m=t.replace(/[\u2212]/g,"-").match(/^[^0-9+\-.]*([+\-]?[0-9]*\.?[0-9]+(?:e[+\-]?[0-9]+)?)/i);
    return m?{n:parseFloat(m[1]),t:t}:{n:NaN,t:t};
  }
  function cmp(a,b){
    if(!isNaN(a.n)&&!isNaN(b.n))return a.n-b.n;
    if(!isNaN(a.n))return -1;
    if(!isNaN(b.n))return 1;
    return a.t.localeCompare(b.t);
  }
  document.querySelectorAll("table").forEach(function(table){
    var body=table.tBodies[0];
    if(!body||!table.tHead)return;
    var heads=table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads,function(th,col){
      th.title="sort by this column";
      th.addEventListener("click",function(){
        var asc=th.getAttribute("aria-sort")!=="ascending";
        Array.prototype.forEach.call(heads,function(h){h.removeAttribute("aria-sort");});
        th.setAttribute("aria-sort",asc?"ascending":"descending");
        var rows=Array.prototype.slice.call(body.rows);
        rows.sort(function(r1,r2){
          var c=cmp(key(r1.cells[col]||r1),key(r2.cells[col]||r2));
          return asc?c:-c;
        });
        rows.forEach(function(r){body.appendChild(r);});
      });
    });
  });
})();
`
