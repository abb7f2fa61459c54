package keep_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"wafbench/driver/keep"
	"wafbench/driver/report"
	"wafbench/driver/result"
	"wafbench/internal/repopath"
)

const rerenderHint = "run `make rerender` (wafbench keep --rerender results/<run>) and commit what it rewrites"

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := repopath.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// committedRuns lists results/<run>/ directories that hold raw records,
// then the crs-test runs (crs-test.json.gz, their report crs-test.md).
func committedRuns(t *testing.T) []string {
	t.Helper()
	runs, err := filepath.Glob(filepath.Join(repoRoot(t), "results", "*", "raw.jsonl*"))
	if err != nil {
		t.Fatal(err)
	}
	crsRuns, err := filepath.Glob(filepath.Join(repoRoot(t), "results", "*", "crs-test.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	runs = append(runs, crsRuns...)
	if len(runs) == 0 {
		t.Fatal("no committed runs under results/")
	}
	for i, r := range runs {
		runs[i] = filepath.Dir(r)
	}
	return runs
}

// TestCommittedRunsRebuild renders every committed run's report from its
// raw files into a temporary copy and wants every output byte-identical to
// the committed one, and the run in its lean form. Runs recorded with
// run --perf draw flame graphs with inferno, a program of its own:
// TestCommittedFlameRunsRebuild (integration tier) checks those.
func TestCommittedRunsRebuild(t *testing.T) {
	for _, dir := range committedRuns(t) {
		if drawsFlameGraphs(t, dir) {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			checkRebuilds(t, dir)
		})
	}
}

// drawsFlameGraphs reports whether dir's report draws flame graphs: a
// record holds a perf profile (driver/perf/flame draws them, or says
// which inferno tool is missing).
func drawsFlameGraphs(t *testing.T, dir string) bool {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "crs-test.json.gz")); err == nil {
		return false
	}
	recs, _, err := result.ReadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.PerfFile != "" && r.Error == "" {
			return true
		}
	}
	return false
}

// checkRebuilds wants dir's report rebuilt byte for byte from its raw
// files, and no by-product beside the report.
func checkRebuilds(t *testing.T, dir string) {
	t.Helper()
	if err := keep.Rebuilds(dir); err != nil {
		t.Errorf("%v; %s", err, rerenderHint)
	}
	if err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if kind := report.Byproduct(filepath.ToSlash(rel)); kind != "" {
			t.Errorf("%s: %s lies beside the report; it belongs in %s (%s)", rel, kind, report.ByproductsArchive, rerenderHint)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestResultsSize holds results/ to its budget: a committed run is its
// lean form.
func TestResultsSize(t *testing.T) {
	const budget = 30 << 20
	var total int64
	err := filepath.WalkDir(filepath.Join(repoRoot(t), "results"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") || strings.Contains(p, "/.keep-") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > budget {
		t.Errorf("results/ holds %.1f MB, budget %d MB: keep runs with `wafbench keep` (by-products archived)", float64(total)/(1<<20), budget>>20)
	}
}

// TestNoMachinePaths greps every committed file for absolute paths of this
// machine: the checkout's path anywhere; the temporary, root and home
// directories, and the checkout's top directory, in results/, docs/ and the
// READMEs (source code may name /tmp/x in a test input).
func TestNoMachinePaths(t *testing.T) {
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v (the test needs git and a checkout)", err)
	}
	top := "/" + strings.SplitN(strings.TrimPrefix(root, "/"), "/", 2)[0] + "/" // the checkout's top directory, e.g. "/srv/"
	everywhere := [][]byte{[]byte(root + "/")}
	prose := [][]byte{[]byte("/tmp/"), []byte("/root/"), []byte("/home/")}
	if top != "/tmp/" && top != "/root/" && top != "/home/" {
		prose = append(prose, []byte(top))
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rel == "" || strings.HasSuffix(rel, ".xz") || strings.HasSuffix(rel, ".gz") || strings.HasSuffix(rel, ".png") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			continue // deleted in the work tree
		}
		needles := everywhere
		if strings.HasPrefix(rel, "results/") || strings.HasPrefix(rel, "docs/") || strings.HasSuffix(rel, "README.md") {
			needles = append(needles[:len(needles):len(needles)], prose...)
		}
		for _, n := range needles {
			if i := bytes.Index(b, n); i >= 0 {
				lo, hi := max(0, i-30), min(len(b), i+50)
				t.Errorf("%s: absolute path of this machine %q in %q (record paths relative to the repository root: internal/repopath)", rel, n, b[lo:hi])
				break
			}
		}
	}
}

// runName matches a run directory's name as the READMEs cite it.
var runName = regexp.MustCompile(`\b20\d{6}T\d{6}Z-[A-Za-z0-9._@-]*[A-Za-z0-9]`)

// retiredRuns reads the "Retired runs" paragraph of results/README.md: the
// commits whose trees still hold them (each run in one of them) and the run
// directories it names.
func retiredRuns(t *testing.T, root string) (commits []string, runs map[string]bool) {
	b, err := os.ReadFile(filepath.Join(root, "results", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "**Retired runs.**")
	if i < 0 {
		return nil, nil
	}
	para, _, _ := strings.Cut(text[i:], "\n\n")
	for _, m := range regexp.MustCompile("git checkout ([0-9a-f]{7,40}) --").FindAllStringSubmatch(para, -1) {
		commits = append(commits, m[1])
	}
	runs = map[string]bool{}
	for _, name := range runName.FindAllString(para, -1) {
		runs[name] = true
	}
	return commits, runs
}

// docPages lists the Markdown pages under docs/, at any depth, relative to
// root.
func docPages(t *testing.T, root string) []string {
	t.Helper()
	var pages []string
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			pages = append(pages, rel)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reading docs/: %v", err)
	}
	return pages
}

// TestCitedRunsExist wants every run directory that README.md,
// results/README.md or a page under docs/ names to be committed under results/, or
// listed in results/README.md's "Retired runs" with the commit that holds
// it (checked against git history where the clone has that commit).
func TestCitedRunsExist(t *testing.T) {
	root := repoRoot(t)
	commits, retired := retiredRuns(t, root)
	if len(retired) > 0 && len(commits) == 0 {
		t.Error("results/README.md lists retired runs without the commit that holds them (`git checkout <sha> -- results/<dir>`)")
	}
	var have []string // the listed commits this clone holds
	for _, c := range commits {
		if exec.Command("git", "-C", root, "cat-file", "-e", c+"^{commit}").Run() == nil {
			have = append(have, c)
		}
	}
	for name := range retired {
		if _, err := os.Stat(filepath.Join(root, "results", name, "meta.json")); err == nil {
			t.Errorf("results/README.md lists %s as retired, but it is still committed under results/", name)
		}
		if len(have) < len(commits) {
			continue // a shallow clone without a listed commit: the listing is all there is to check
		}
		held := false
		for _, c := range have {
			if exec.Command("git", "-C", root, "cat-file", "-e", c+":results/"+name+"/meta.json").Run() == nil {
				held = true
				break
			}
		}
		if !held {
			t.Errorf("results/README.md lists %s as retired, but none of %v holds results/%s/meta.json", name, commits, name)
		}
	}
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "results", "README.md")}
	for _, d := range docPages(t, root) {
		files = append(files, filepath.Join(root, d))
	}
	cited := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range runName.FindAllString(string(b), -1) {
			cited++
			if retired[name] {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, "results", name, "meta.json")); err != nil {
				rel, _ := filepath.Rel(root, f)
				t.Errorf("%s cites run %s, which is not committed under results/ (no meta.json)", rel, name)
			}
		}
	}
	if cited == 0 {
		t.Error("the READMEs cite no run directory; figures must name their run")
	}
}

// TestKeep keeps a committed run (already lean) from elsewhere into a new
// results directory, then refuses the same run with a report that does not
// come from its raw files, and a directory that is no run.
func TestKeep(t *testing.T) {
	src := committedRuns(t)[0]
	tmp := t.TempDir()
	runs, into := filepath.Join(tmp, "runs"), filepath.Join(tmp, "results")
	run := filepath.Join(runs, filepath.Base(src))
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("cp", "-a", src+"/.", run).Run(); err != nil {
		t.Fatal(err)
	}
	// export/ as 'wafbench run' writes it: derived, not kept.
	if err := os.MkdirAll(filepath.Join(run, "export", "fortio"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "export", "fortio", "t1-x.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// perf.data as 'wafbench run --perf' writes it: binary, naming this
	// machine's executables; not kept.
	if err := os.MkdirAll(filepath.Join(run, "perf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "perf", "t01-x.data"), []byte("PERFILE2\x00/usr/local/bin/envoy\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := report.Build(run, nil); err != nil { // report.html lists the run's files
		t.Fatal(err)
	}
	got, err := keep.Keep(run, keep.Options{Into: into})
	if err != nil {
		t.Fatalf("keep %s: %v", run, err)
	}
	if _, err := os.Stat(filepath.Join(got, "export")); !os.IsNotExist(err) {
		t.Errorf("the kept run holds export/ (stat: %v); 'wafbench report --export' rebuilds it", err)
	}
	if b, _ := os.ReadFile(filepath.Join(got, report.ByproductsList)); bytes.Contains(b, []byte("export/")) || bytes.Contains(b, []byte(".data")) {
		t.Errorf("export/ or perf.data archived as by-products:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(got, "perf", "t01-x.data")); !os.IsNotExist(err) {
		t.Errorf("the kept run holds perf.data (stat: %v)", err)
	}
	if want := filepath.Join(into, filepath.Base(src)); got != want {
		t.Errorf("kept into %s, want %s", got, want)
	}
	if err := keep.Rebuilds(got); err != nil {
		t.Errorf("kept run does not rebuild: %v", err)
	}
	if _, err := keep.Keep(run, keep.Options{Into: into}); !errors.Is(err, keep.ErrInput) {
		t.Errorf("keeping twice: got %v, want ErrInput (exists)", err)
	}

	md := filepath.Join(run, report.ReportFile)
	b, _ := os.ReadFile(md)
	if err := os.WriteFile(md, append(b, "edited by hand\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(tmp, "other")
	if _, err := keep.Keep(run, keep.Options{Into: other}); !errors.Is(err, keep.ErrInput) || !strings.Contains(err.Error(), "report.md differs") {
		t.Errorf("keeping a run whose report.md was edited: got %v, want ErrInput naming report.md", err)
	}
	if _, err := os.Stat(other); err == nil {
		entries, _ := os.ReadDir(other)
		if len(entries) != 0 {
			t.Errorf("a refused keep left %d entries in %s", len(entries), other)
		}
	}
	if _, err := keep.Keep(tmp, keep.Options{Into: other}); !errors.Is(err, keep.ErrInput) {
		t.Errorf("keeping a directory without meta.json: got %v, want ErrInput", err)
	}
}

// TestKeepCRSTest keeps a committed crs-test run (meta.json, the gzipped
// crs-test.json, crs-test.md, archived CSV and logs) from elsewhere, then
// refuses it once its crs-test.md no longer comes from its JSON.
func TestKeepCRSTest(t *testing.T) {
	runs, err := filepath.Glob(filepath.Join(repoRoot(t), "results", "*", "crs-test.json.gz"))
	if err != nil || len(runs) == 0 {
		t.Fatalf("no committed crs-test run under results/ (%v)", err)
	}
	src := filepath.Dir(runs[len(runs)-1])
	tmp := t.TempDir()
	run := filepath.Join(tmp, "runs", filepath.Base(src))
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("cp", "-a", src+"/.", run).Run(); err != nil {
		t.Fatal(err)
	}
	got, err := keep.Keep(run, keep.Options{Into: filepath.Join(tmp, "results")})
	if err != nil {
		t.Fatalf("keep %s: %v", run, err)
	}
	if err := keep.Rebuilds(got); err != nil {
		t.Errorf("kept crs-test run does not rebuild: %v", err)
	}
	md := filepath.Join(run, "crs-test.md")
	b, _ := os.ReadFile(md)
	if err := os.WriteFile(md, append(b, "edited by hand\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := keep.Keep(run, keep.Options{Into: filepath.Join(tmp, "other")}); !errors.Is(err, keep.ErrInput) || !strings.Contains(err.Error(), "crs-test.md differs") {
		t.Errorf("keeping a crs-test run whose crs-test.md was edited: got %v, want ErrInput naming crs-test.md", err)
	}
}

// interval is a figure with its confidence interval as the READMEs write it:
// "1.600 [1.448, 1.767]" (a "×" after the figure allowed).
var interval = regexp.MustCompile(`(−?\d+\.\d+)×? \[(−?\d+\.\d+), (−?\d+\.\d+)\]`)

// squash drops what the READMEs and reports spell differently around the
// same figure: spaces, table bars, and the typographic minus.
var squash = strings.NewReplacer(" ", "", "|", "", "−", "-")

// retiredFile is file (a path under the repository root) as the first of
// commits that holds it has it; nil when none does (a shallow clone).
func retiredFile(root string, commits []string, file string) []byte {
	for _, c := range commits {
		if b, err := exec.Command("git", "-C", root, "show", c+":"+file).Output(); err == nil {
			return b
		}
	}
	return nil
}

// TestCitedFiguresInReports keeps the figures of the READMEs and of every
// page under docs/ in step with the runs they cite: every figure with an
// interval in a section (the text between two headings) must appear, figure
// then interval, in the report of a run that section cites (report.md, or
// crs-test.md of a CRS suite run; a retired run's as the commit that holds
// it has it).
// A figure left behind when its run was re-rendered or replaced fails here.
func TestCitedFiguresInReports(t *testing.T) {
	root := repoRoot(t)
	heading := regexp.MustCompile(`(?m)^#{1,4} `)
	commits, retired := retiredRuns(t, root)
	checked := 0
	for _, doc := range append([]string{"README.md", filepath.Join("results", "README.md")}, docPages(t, root)...) {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		starts := append(heading.FindAllStringIndex(text, -1), []int{len(text), len(text)})
		prev := 0
		for _, s := range starts {
			section := text[prev:s[0]]
			prev = s[0]
			figs := interval.FindAllStringSubmatchIndex(section, -1)
			if len(figs) == 0 {
				continue
			}
			var reports strings.Builder
			runs := runName.FindAllString(section, -1)
			slices.Sort(runs)
			runs = slices.Compact(runs)
			for _, name := range runs {
				for _, f := range []string{"report.md", "crs-test.md"} {
					if r, err := os.ReadFile(filepath.Join(root, "results", name, f)); err == nil {
						reports.Write(r)
					} else if retired[name] {
						reports.Write(retiredFile(root, commits, "results/"+name+"/"+f))
					}
				}
			}
			all := squash.Replace(reports.String())
			for _, m := range figs {
				line := 1 + strings.Count(text[:prev-len(section)+m[0]], "\n")
				fig := section[m[2]:m[3]] + "[" + section[m[4]:m[5]] + "," + section[m[6]:m[7]] + "]"
				checked++
				switch {
				case len(runs) == 0:
					t.Errorf("%s:%d: %q: its section cites no run", doc, line, section[m[0]:m[1]])
				case !strings.Contains(all, squash.Replace(fig)):
					t.Errorf("%s:%d: %q is in no report of the runs its section cites (%s)", doc, line,
						section[m[0]:m[1]], strings.Join(runs, ", "))
				}
			}
		}
	}
	if checked == 0 {
		t.Error("the READMEs state no figure with an interval; this test checks nothing")
	}
}

// TestKeepRewritesLogsWithNUL keeps a crs-test run whose host log holds
// a NUL byte (the CRS tests send them, and the host logs what it got) and
// this checkout's absolute path: the kept archive holds the path made
// relative, as for any log.
func TestKeepRewritesLogsWithNUL(t *testing.T) {
	root := repoRoot(t)
	runs, err := filepath.Glob(filepath.Join(root, "results", "*", "crs-test.json.gz"))
	if err != nil || len(runs) == 0 {
		t.Fatalf("no committed crs-test run under results/ (%v)", err)
	}
	src := filepath.Dir(runs[len(runs)-1])
	run := filepath.Join(t.TempDir(), "runs", filepath.Base(src))
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("cp", "-a", src+"/.", run).Run(); err != nil {
		t.Fatal(err)
	}
	// The by-products as the run left them, before keep archived them.
	if out, err := exec.Command("tar", "-xJf", filepath.Join(run, report.ByproductsArchive), "-C", run).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	for _, f := range []string{report.ByproductsArchive, report.ByproductsList} {
		if err := os.Remove(filepath.Join(run, f)); err != nil {
			t.Fatal(err)
		}
	}
	log := "[info] loaded 848 rules from " + root + "/build/crs/crs-test.conf\n" + "[info] ARGS:x=\x00\x01\n"
	if err := os.WriteFile(filepath.Join(run, "envoy-crs-test-nul.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := keep.Keep(run, keep.Options{Into: filepath.Join(t.TempDir(), "results")})
	if err != nil {
		t.Fatalf("keep %s: %v", run, err)
	}
	out, err := exec.Command("sh", "-c", "xz -dc "+filepath.Join(got, report.ByproductsArchive)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(root+"/")) {
		t.Errorf("the kept archive holds this checkout's path %s (a log with a NUL byte left as it was)", root)
	}
	if !bytes.Contains(out, []byte("rules from build/crs/crs-test.conf")) {
		t.Errorf("the kept archive lacks the log line with its path made relative")
	}
}
