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
