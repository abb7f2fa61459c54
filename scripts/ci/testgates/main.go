// Command testgates fails when a test in the tree would not run under
// `make test`: a _test.go file whose build constraints (//go:build or a
// GOOS/GOARCH file-name suffix) the tags make test passes do not satisfy, a
// test that skips itself (t.Skip, t.Skipf, t.SkipNow, testing.Short), an if
// on an environment variable whose body only returns (a silent skip), a
// testscript script with a skip command, a GoogleTest test that is disabled
// (DISABLED_) or skips (GTEST_SKIP), and a _test.go file in a Go module make
// test does not test. make test runs it with the tags and modules of its
// own go test lines, so a new gate cannot slip in unnoticed.
//
// Tests that need external programs carry the build tag integration (the
// second tier, docs/testing.md); make test passes it, so they are checked
// like every other test.
//
//	go run ./scripts/ci/testgates -tags integration,modsecurity_engine -modules .,filters/caddy-coraza [root]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("testgates", flag.ContinueOnError)
	fl.SetOutput(stderr)
	tags := fl.String("tags", "", "build tags make test passes to go test, comma- or space-separated (empty: none)")
	modules := fl.String("modules", ".", "module directories, relative to root, in which make test runs go test ./..., comma- or space-separated")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 1 {
		fmt.Fprintln(stderr, "testgates: want at most one argument, the repository root")
		return 2
	}
	root := "."
	if fl.NArg() == 1 {
		root = fl.Arg(0)
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "testgates: root %s: not a directory\n", root)
		return 2
	}
	c := config{Tags: split(*tags), Modules: split(*modules)}
	problems, files, err := check(root, c)
	if err != nil {
		fmt.Fprintf(stderr, "testgates: %v\n", err)
		return 2
	}
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "testgates: %d test(s) make test would not run; remove the gate or make make test satisfy it\n", len(problems))
		return 1
	}
	fmt.Fprintf(stdout, "testgates: %d test files checked (%d Go, %d testscript, %d GoogleTest): make test runs them all (tags %q, modules %s)\n",
		files.total(), files.Go, files.Script, files.GTest, strings.Join(c.Tags, ","), strings.Join(c.Modules, ","))
	return 0
}

// split splits a list on commas and white space.
func split(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// config is what make test satisfies: the build tags of its go test runs and
// the module directories (relative to the root) it runs them in.
type config struct {
	Tags    []string
	Modules []string
}

// counts is how many test files of each kind Check read.
type counts struct{ Go, Script, GTest int }

func (c counts) total() int { return c.Go + c.Script + c.GTest }

// check walks the tree under root and returns one line per gate found,
// sorted, each naming the file and line.
func check(root string, c config) ([]string, counts, error) {
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled, ctx.BuildTags = "linux", "amd64", true, c.Tags
	mods := map[string]bool{}
	for _, m := range c.Modules {
		mods[filepath.Clean(m)] = true
	}
	var problems []string
	var n counts
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		name := d.Name()
		if d.IsDir() {
			// What go test ./... skips too: testdata, _x, .x; plus the
			// git-ignored build outputs and environments.
			if rel != "." && (name == "testdata" && !isScriptDir(path) || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "build" && filepath.Dir(rel) == "." || name == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(name, "_test.go") && !inTestdata(rel):
			n.Go++
			problems = append(problems, checkGo(fset, &ctx, root, rel, mods)...)
		case strings.HasSuffix(name, ".txtar") && inScriptDir(rel):
			n.Script++
			p, err := checkScript(path, rel)
			if err != nil {
				return err
			}
			problems = append(problems, p...)
		case strings.HasSuffix(name, "_test.cc") || strings.HasSuffix(name, "_test.cpp"):
			n.GTest++
			p, err := checkGTest(path, rel)
			if err != nil {
				return err
			}
			problems = append(problems, p...)
		}
		return nil
	})
	sort.Strings(problems)
	return problems, n, err
}

// isScriptDir: testscript's scripts live in testdata/script; Check reads
// those (and nothing else below testdata).
func isScriptDir(path string) bool {
	st, err := os.Stat(filepath.Join(path, "script"))
	return err == nil && st.IsDir()
}

func inTestdata(rel string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(rel), "/"), "testdata")
}

func inScriptDir(rel string) bool {
	return strings.Contains(filepath.ToSlash(rel), "testdata/script/")
}

func checkGo(fset *token.FileSet, ctx *build.Context, root, rel string, mods map[string]bool) []string {
	var out []string
	dir, name := filepath.Split(filepath.Join(root, rel))
	ok, err := ctx.MatchFile(dir, name)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", rel, err)}
	}
	if !ok {
		out = append(out, fmt.Sprintf("%s: its build constraints exclude it under make test (GOOS=linux GOARCH=amd64, tags %q)", rel, strings.Join(ctx.BuildTags, ",")))
	}
	if m := moduleOf(root, rel); !mods[m] {
		out = append(out, fmt.Sprintf("%s: in module %s, where make test runs no go test", rel, m))
	}
	f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
	if err != nil {
		return append(out, fmt.Sprintf("%s: %v", rel, err))
	}
	at := func(p token.Pos) string {
		return fmt.Sprintf("%s:%d", rel, fset.Position(p).Line)
	}
	ast.Inspect(f, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.CallExpr:
			sel, ok := x.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			switch sel.Sel.Name {
			case "Skip", "Skipf", "SkipNow":
				out = append(out, fmt.Sprintf("%s: %s skips the test (a test that cannot run its component fails, saying how to install it)", at(x.Pos()), sel.Sel.Name))
			case "Short":
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "testing" {
					out = append(out, fmt.Sprintf("%s: testing.Short gates the test on -short", at(x.Pos())))
				}
			}
		case *ast.IfStmt:
			if (readsEnv(x.Cond) || x.Init != nil && readsEnv(x.Init)) && onlyReturns(x.Body) {
				out = append(out, fmt.Sprintf("%s: an if on an environment variable that only returns (a silent skip)", at(x.Pos())))
			}
		}
		return true
	})
	return out
}

// moduleOf is the directory, relative to root, of the go.mod nearest above rel.
func moduleOf(root, rel string) string {
	for d := filepath.Dir(rel); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(root, d, "go.mod")); err == nil {
			return filepath.Clean(d)
		}
		if d == "." || d == "/" {
			return "."
		}
	}
}

// readsEnv reports whether a node calls os.Getenv or os.LookupEnv.
func readsEnv(e ast.Node) bool {
	found := false
	ast.Inspect(e, func(x ast.Node) bool {
		if call, ok := x.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" && (sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv") {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// onlyReturns: the block is a lone return with no results (a test
// function's early exit).
func onlyReturns(b *ast.BlockStmt) bool {
	if len(b.List) != 1 {
		return false
	}
	r, ok := b.List[0].(*ast.ReturnStmt)
	return ok && len(r.Results) == 0
}

// scriptSkip is a testscript skip command, with or without conditions.
var scriptSkip = regexp.MustCompile(`^\s*(?:\[[^\]]*\]\s*)*skip(?:\s|$)`)

func checkScript(path, rel string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "-- ") {
			break // the script ends where its first file begins
		}
		if scriptSkip.MatchString(l) {
			out = append(out, fmt.Sprintf("%s:%d: testscript skip: %s", rel, i+1, strings.TrimSpace(l)))
		}
	}
	return out, nil
}

var gtestGate = regexp.MustCompile(`\bDISABLED_|\bGTEST_SKIP\b`)

func checkGTest(path, rel string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, l := range strings.Split(string(b), "\n") {
		if gtestGate.MatchString(l) {
			out = append(out, fmt.Sprintf("%s:%d: GoogleTest test disabled or skipped: %s", rel, i+1, strings.TrimSpace(l)))
		}
	}
	return out, nil
}
