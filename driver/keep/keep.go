// Package keep turns a run directory into the lean form committed under
// results/ (wafbench keep): every recorded path portable, the per-window
// folded stacks gzipped, the by-products no report needs (host logs and
// configs, admin stats, perf's flat reports) in one deterministic archive
// with a list, perf.data left out (it names this machine's binaries),
// identical files stored once, and the report rebuilt — and it refuses a
// run whose report does not rebuild byte-identically.
package keep

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"wafbench/driver/conformance"
	"wafbench/driver/export"
	"wafbench/driver/report"
	"wafbench/driver/result"
	"wafbench/internal/repopath"
)

// ErrInput marks errors caused by the arguments: not a run directory, a
// destination that exists, a report that does not rebuild.
var ErrInput = errors.New("keep")

// Options says how to keep a run.
type Options struct {
	// Into is the parent directory of kept runs (results/).
	Into string
	// RecordedRoot is the checkout the run was recorded in, whose absolute
	// paths become repository-relative; empty means this checkout.
	RecordedRoot string
	// Rerender accepts a run whose committed report was rendered by other
	// code: the report is rendered again instead of compared.
	Rerender bool
}

// Keep writes the lean form of the run in src to Into/<base of src> and
// returns that directory. src may be that directory already (a committed
// run made lean again, or re-rendered); it is then replaced only once the
// new form is complete and checked. On any error nothing under Into changes.
func Keep(src string, o Options) (string, error) {
	crsTest := isCRSTest(src)
	if st, err := os.Stat(filepath.Join(src, result.MetaFile)); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a run directory (no %s)", ErrInput, src, result.MetaFile)
	}
	if !crsTest && !result.HasRaw(src) {
		return "", fmt.Errorf("%w: %s is not a run directory (no %s)", ErrInput, src, result.RawFile)
	}
	root := o.RecordedRoot
	if root == "" {
		r, err := repopath.Root()
		if err != nil {
			return "", err
		}
		root = r
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	into, err := filepath.Abs(o.Into)
	if err != nil {
		return "", err
	}
	dest := filepath.Join(into, filepath.Base(abs))
	inPlace := dest == abs
	if _, err := os.Stat(dest); err == nil && !inPlace {
		return "", fmt.Errorf("%w: %s already exists", ErrInput, dest)
	}
	if err := os.MkdirAll(into, 0o755); err != nil {
		return "", err
	}
	if !o.Rerender {
		if err := checkRebuilds(abs); err != nil {
			return "", err
		}
	}
	stage, err := os.MkdirTemp(into, ".keep-"+filepath.Base(abs)+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	if err := leanCopy(src, abs, stage, root, o.Rerender); err != nil {
		return "", err
	}
	return install(stage, dest, inPlace)
}

// leanCopy copies the run in abs (given as src) into stage, makes it lean
// (paths under root made relative), renders its outputs (again, with
// rerender) and checks that the copy rebuilds and holds no machine path.
func leanCopy(src, abs, stage, root string, rerender bool) error {
	if err := copyTree(abs, stage); err != nil {
		return err
	}
	if err := lean(stage, root); err != nil {
		return fmt.Errorf("keep %s: %w", src, err)
	}
	if rerender { // outputs today's report no longer writes go
		outs, err := outputs(stage)
		if err != nil {
			return err
		}
		for _, rel := range outs {
			if err := os.Remove(filepath.Join(stage, rel)); err != nil {
				return err
			}
		}
	}
	if err := build(stage); err != nil {
		return fmt.Errorf("keep %s: %w", src, err)
	}
	if err := Rebuilds(stage); err != nil {
		return fmt.Errorf("keep %s: the lean copy: %w", src, err)
	}
	if err := checkPaths(stage); err != nil {
		return fmt.Errorf("keep %s: %w", src, err)
	}
	return nil
}

// install moves the finished stage to dest, replacing dest (the run kept
// in place) only once stage is there.
func install(stage, dest string, inPlace bool) (string, error) {
	if inPlace {
		old := stage + ".old"
		if err := os.Rename(dest, old); err != nil {
			return "", err
		}
		if err := os.Rename(stage, dest); err != nil {
			os.Rename(old, dest)
			return "", err
		}
		return dest, os.RemoveAll(old)
	}
	return dest, os.Rename(stage, dest)
}

// checkRebuilds refuses a run whose report, rebuilt from its raw files by
// this code, differs from the one it holds.
func checkRebuilds(dir string) error {
	if err := Rebuilds(dir); err != nil {
		return fmt.Errorf("%w: %s: %v (run 'wafbench report %s' first, or keep --rerender)", ErrInput, dir, err, dir)
	}
	return nil
}

// Rebuilds renders the report of the run in dir into a temporary copy and
// compares every output (report.md, report.html, summary.json, bench.txt,
// charts, flame-graph SVGs) with dir's own; it names the first file that
// differs or is missing.
func Rebuilds(dir string) error {
	tmp, err := os.MkdirTemp("", "wafbench-rebuild-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(dir, tmp); err != nil {
		return err
	}
	if err := build(tmp); err != nil {
		return err
	}
	outs, err := outputs(tmp)
	if err != nil {
		return err
	}
	have, err := outputs(dir)
	if err != nil {
		return err
	}
	for _, rel := range outs {
		want, err := os.ReadFile(filepath.Join(tmp, rel))
		if err != nil {
			return err
		}
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			return fmt.Errorf("%s is missing: the report writes it", rel)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s differs from what the report rebuilds from the raw files", rel)
		}
	}
	for _, rel := range have {
		if !slices.Contains(outs, rel) {
			return fmt.Errorf("%s is not written by today's report (stale output)", rel)
		}
	}
	return nil
}

// outputs lists the report outputs present in dir, slash-separated and
// sorted: what Rebuilds compares.
func outputs(dir string) ([]string, error) {
	var out []string
	for _, f := range []string{report.ReportFile, report.HTMLFile, report.SummaryFile, report.BenchFile, conformance.MarkdownFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			out = append(out, f)
		}
	}
	for _, pat := range []string{report.ChartsDir + "/*.svg", "perf/flame-*.svg"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		for _, p := range m {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	slices.Sort(out)
	return out, nil
}

// isCRSTest reports whether dir holds a crs-test run (wafbench crs-test):
// meta.json and crs-test.json, no raw records. Its report is crs-test.md,
// rendered from crs-test.json by driver/conformance.
func isCRSTest(dir string) bool {
	return !result.HasRaw(dir) && conformance.IsRunDir(dir)
}

// build renders the report of the run in dir from its raw files: report.Build,
// or crs-test.md from crs-test.json for a crs-test run.
func build(dir string) error {
	if !isCRSTest(dir) {
		return report.Build(dir, nil)
	}
	run, err := conformance.ReadRunDir(dir)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, conformance.MarkdownFile), []byte(run.Markdown()), 0o644)
}

// lean rewrites the run in dir in place: paths portable, folded stacks
// and crs-test.json gzipped, export/ removed, by-products archived (a crs-test run's host
// logs cut to the windows of the tests that did not pass: TrimLog).
func lean(dir, root string) error {
	// export/ is derived from raw.jsonl alone ('wafbench report --export'
	// writes it again) and the bulk of a long run's files.
	if err := os.RemoveAll(filepath.Join(dir, export.Dir)); err != nil {
		return err
	}
	files, err := list(dir)
	if err != nil {
		return err
	}
	var notPassed map[string]bool // a crs-test run: its host logs are trimmed (conformance.TrimLog)
	if isCRSTest(dir) {
		run, err := conformance.ReadRunDir(dir)
		if err != nil {
			return err
		}
		notPassed = run.NotPassed()
	}
	var byproducts []string
	for _, rel := range files {
		p := filepath.Join(dir, rel)
		if filepath.Dir(rel) == "perf" && strings.HasSuffix(rel, ".data") {
			// perf.data is binary and names this machine's binaries by
			// their absolute paths, which cannot be rewritten in place;
			// its symbolised content is kept (the folded stacks and the
			// flat report), and the run directory still holds it.
			if err := os.Remove(p); err != nil {
				return err
			}
			continue
		}
		if kind := report.Byproduct(rel); kind != "" {
			byproducts = append(byproducts, rel)
			if notPassed != nil && strings.HasSuffix(rel, ".log") {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if err := os.WriteFile(p, conformance.TrimLog(b, func(id string) bool { return notPassed[id] }), 0o644); err != nil {
					return err
				}
			}
			// Host logs and configs: only the checkout and the run's
			// temporary directories are rewritten; CRS text in them may
			// hold other path-like words. A host log is text even with NUL bytes in it
			// (the CRS tests' payloads, logged as received).
			if err := rewriteText(p, kind == report.ByproductHostLogs, func(b []byte) []byte {
				b = repopath.ReplaceDir(b, root, "")
				return bytes.ReplaceAll(b, []byte(os.TempDir()+"/wafbench-"), []byte(repopath.TempMarker+"/wafbench-"))
			}); err != nil {
				return err
			}
			continue
		}
		if err := rewriteText(p, false, func(b []byte) []byte { return repopath.PortableFrom(b, root) }); err != nil {
			return err
		}
		if filepath.Dir(rel) == "perf" && strings.HasSuffix(rel, ".folded") || rel == conformance.JSONFile || rel == result.RawFile {
			if err := gzipFile(p); err != nil {
				return err
			}
		}
	}
	if len(byproducts) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, report.ByproductsArchive)); err == nil {
		return fmt.Errorf("%s holds an archive and by-products beside it: %s", dir, byproducts[0])
	}
	return archive(dir, byproducts)
}

// archive stores the by-products rels of dir in byproducts.tar.xz (identical
// files once: hard links in the tar), lists them in byproducts.txt and
// removes them. The archive is reproducible: sorted names, no owners, mtime
// 0, single-threaded xz.
func archive(dir string, rels []string) error {
	first := map[string]string{} // sha256 → first path with it
	var list strings.Builder
	for _, rel := range rels {
		p := filepath.Join(dir, rel)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])
		fmt.Fprintf(&list, "%s  %d  %s\n", h, len(b), rel)
		if f, ok := first[h]; ok {
			if err := os.Remove(p); err != nil {
				return err
			}
			if err := os.Link(filepath.Join(dir, f), p); err != nil {
				return err
			}
			continue
		}
		first[h] = rel
	}
	if err := os.WriteFile(filepath.Join(dir, report.ByproductsList), []byte(list.String()), 0o644); err != nil {
		return err
	}
	args := []string{"--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--mtime=@0", "--format=gnu",
		"-cJf", report.ByproductsArchive, "--"}
	cmd := exec.Command("tar", append(args, rels...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XZ_OPT=-6 -T1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("tar: %w: %s", err, bytes.TrimSpace(out))
	}
	for _, rel := range rels {
		if err := os.Remove(filepath.Join(dir, rel)); err != nil {
			return err
		}
	}
	// Directories left empty (stats/) go too.
	for _, rel := range rels {
		for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
			os.Remove(filepath.Join(dir, d)) // fails while not empty
		}
	}
	return nil
}

// checkPaths fails when a text file of the run in dir (not the archive)
// holds an absolute path of this machine: the checkout, the temporary or
// the home directory.
func checkPaths(dir string) error {
	files, err := list(dir)
	if err != nil {
		return err
	}
	needles := [][]byte{[]byte("/tmp/"), []byte("/root/"), []byte("/home/")}
	if root, err := repopath.Root(); err == nil {
		needles = append(needles, []byte(root+"/"))
	}
	for _, rel := range files {
		if rel == report.ByproductsArchive || strings.HasSuffix(rel, ".gz") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			return err
		}
		for _, n := range needles {
			if i := bytes.Index(b, n); i >= 0 {
				return fmt.Errorf("%s still holds an absolute path: %q", rel, excerpt(b, i))
			}
		}
	}
	return nil
}

func excerpt(b []byte, i int) string {
	lo, hi := max(0, i-20), min(len(b), i+60)
	return string(b[lo:hi])
}

// list returns the regular files under dir, slash-separated and sorted,
// without temporary files and the run's disk reserve.
func list(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), ".tmp") || d.Name() == ".reserve" {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(out)
	return out, err
}

// rewriteText applies f to the file at p unless it is binary (a NUL byte)
// and not known to be text.
func rewriteText(p string, text bool, f func([]byte) []byte) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if !text && bytes.IndexByte(b, 0) >= 0 {
		return nil
	}
	nb := f(b)
	if bytes.Equal(nb, b) {
		return nil
	}
	return os.WriteFile(p, nb, 0o644)
}

// gzipFile replaces p by p.gz (best compression, no name or time in the
// header, so the same stacks give the same bytes).
func gzipFile(p string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(p+".gz", buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Remove(p)
}

// copyTree copies the regular files under src into dst (which exists).
func copyTree(src, dst string) error {
	files, err := list(src)
	if err != nil {
		return err
	}
	for _, rel := range files {
		if err := copyFile(filepath.Join(src, rel), filepath.Join(dst, rel)); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
