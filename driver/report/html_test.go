package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestHTML(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ChartsDir), 0o755)
	svg := `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>`
	for name, body := range map[string]string{
		"charts/a.svg": svg, "raw.jsonl": "{}\n", "meta.json": "{}", "perf/flame.svg": svg, ".reserve": "x", "report.md.tmp": "x",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	md := "# wafbench report: x & y\n\n| mode | req/s |\n| --- | --- |\n| a | 2 |\n\n" +
		"![a](charts/a.svg)\n\n![missing](charts/none.svg)\n\n[flame graph](perf/flame.svg)\n\n<script>alert(1)</script>\n\n![bad](javascript:alert(1))\n"
	files, err := listFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeHTML(&b, []byte(md), files); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"<title>wafbench report: x &amp; y</title>",
		"<table>", "<th>req/s</th>",
		`<a class="chart" href="charts/a.svg"><img src="charts/a.svg" alt="a"></a>`,
		`<img src="charts/none.svg" alt="missing">`,
		`<a href="perf/flame.svg">flame graph</a>`,
		`<li><a href="raw.jsonl">raw.jsonl</a></li>`, `<li><a href="perf/flame.svg">perf/flame.svg</a></li>`,
		`<img src="" alt="bad">`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert", "data:image", ".reserve", "report.md.tmp", `href="charts/a.svg">charts/a.svg`, "http://", "https://"} {
		if strings.Contains(got, bad) {
			t.Errorf("report.html contains %q", bad)
		}
	}
	var again bytes.Buffer
	if err := writeHTML(&again, []byte(md), files); err != nil || !bytes.Equal(again.Bytes(), b.Bytes()) {
		t.Errorf("second rendering differs (err %v)", err)
	}
}

// TestBuildWritesHTML checks that report.html is rebuilt with report.md and
// renders the same Markdown.
func TestBuildWritesHTML(t *testing.T) {
	dir := copyRun(t)
	if err := Build(dir, nil); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, ReportFile))
	files, err := listFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := writeHTML(&want, md, files); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, HTMLFile)); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("%s is not the rendering of %s", HTMLFile, ReportFile)
	}
}

// chromium finds the browser the browser test drives: $WAFBENCH_CHROMIUM or
// Debian's chromium.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("WAFBENCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: install the Debian package chromium (scripts/setup.sh does) or set WAFBENCH_CHROMIUM")
	return ""
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
