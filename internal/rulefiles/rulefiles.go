// Package rulefiles reads a ModSecurity/Coraza rules file the way both
// engines do: logical lines (a trailing backslash continues a line; blank
// lines and # comments are skipped), Include directives followed
// recursively (a glob includes its matches in name order, a relative name
// resolves against the including file's directory), and the data files rules
// name (@pmFromFile and friends). It has no dependency on either engine, so
// the CRS exporter (which hashes what the engines load) and the Coraza
// module (which refuses script-running rules at load) share it; the C++
// module implements the same refusal in C++ (filters/modsecurity/engine.cc).
package rulefiles

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// maxDepth bounds Include nesting (an Include cycle is cut by the visited set).
const maxDepth = 100

// dataFileRef matches an operator that reads a file named in its argument.
var dataFileRef = regexp.MustCompile(`@(?:pmFromFile|pmf|ipMatchFromFile|ipMatchF)\s+([^"\s]+)`)

// Line is one logical line of a rules file.
type Line struct {
	File string // absolute path
	N    int    // 1-based number of the line it starts on
	Text string // continuation lines joined with a space
}

// Walk visits every logical line of mainConf and of every file it includes,
// depth first in the order the engines read them, and returns every file
// read: configuration files in that order, each followed by the data files
// its rules name. A missing included or data file is an error; visit's error
// stops the walk.
func Walk(mainConf string, visit func(Line) error) ([]string, error) {
	return walkFS(OSFS{}, mainConf, visit)
}

// OSFS reads rules files from the operating system by absolute path.
type OSFS struct{}

// Open opens name with os.Open.
func (OSFS) Open(name string) (fs.File, error) { return os.Open(name) }

// Stat is os.Stat.
func (OSFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// Glob is filepath.Glob.
func (OSFS) Glob(pattern string) ([]string, error) { return filepath.Glob(pattern) }

// walkFS is Walk reading through fsys, which takes absolute paths (the
// Coraza Wasm filter gets its rule files in its configuration, not from a
// file system).
func walkFS(fsys fs.FS, mainConf string, visit func(Line) error) ([]string, error) {
	abs, err := filepath.Abs(mainConf)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	add := func(name string) bool {
		if seen[name] {
			return false
		}
		seen[name] = true
		out = append(out, name)
		return true
	}
	var walk func(conf string, depth int) error
	walk = func(conf string, depth int) error {
		if depth > maxDepth {
			return fmt.Errorf("%s: includes nested more than %d deep", conf, maxDepth)
		}
		lines, err := read(fsys, conf)
		if err != nil {
			return err
		}
		if !add(conf) {
			return nil
		}
		base := filepath.Dir(conf)
		resolve := func(name string) string {
			if filepath.IsAbs(name) {
				return filepath.Clean(name)
			}
			return filepath.Join(base, name)
		}
		var refs []string
		for _, l := range lines {
			if visit != nil {
				if err := visit(l); err != nil {
					return err
				}
			}
			for _, m := range dataFileRef.FindAllStringSubmatch(l.Text, -1) {
				refs = append(refs, m[1])
			}
			f := strings.Fields(l.Text)
			if len(f) < 2 || !strings.EqualFold(f[0], "Include") {
				continue
			}
			pat := resolve(strings.Trim(strings.Join(f[1:], " "), `"'`))
			matches := []string{pat}
			if strings.ContainsAny(pat, "*?[") {
				if matches, err = fs.Glob(fsys, pat); err != nil {
					return fmt.Errorf("%s:%d: Include %s: %w", conf, l.N, pat, err)
				}
			}
			for _, m := range matches {
				if err := walk(m, depth+1); err != nil {
					return err
				}
			}
		}
		for _, ref := range refs {
			name := resolve(ref)
			if _, err := fs.Stat(fsys, name); err != nil {
				return fmt.Errorf("%s names %s: %w", conf, ref, err)
			}
			add(name)
		}
		return nil
	}
	if err := walk(abs, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// read splits a file into logical lines.
func read(fsys fs.FS, path string) ([]Line, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Line
	var cur strings.Builder
	first := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if cur.Len() == 0 {
			first = n
			if t := strings.TrimSpace(line); t == "" || t[0] == '#' {
				continue
			}
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(cont)
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(line)
		out = append(out, Line{File: path, N: first, Text: cur.String()})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cur.Len() > 0 {
		out = append(out, Line{File: path, N: first, Text: cur.String()})
	}
	return out, nil
}

// execAction matches the exec action in an action list ("exec:/x.lua",
// `'exec:…'`, ", exec :…"), in any case.
var execAction = regexp.MustCompile(`(?i)(^|[\s,"'])exec\s*:`)

// CheckNoScripts refuses a rule set that could run scripts or programs in
// the engine's host process: SecRuleScript (Lua), SecRemoteRules (rules that
// cannot be checked), the operator @inspectFile and the action exec:. Inside
// Envoy, libmodsecurity's Lua would bind to Envoy's own LuaJIT symbols, and
// Coraza ignores SecRuleScript silently — either way the two engines would
// not evaluate the same rules. The error names file and line.
func CheckNoScripts(mainConf string) error { return CheckNoScriptsFS(OSFS{}, mainConf) }

// CheckNoScriptsFS is CheckNoScripts reading through fsys (see WalkFS).
func CheckNoScriptsFS(fsys fs.FS, mainConf string) error {
	_, err := walkFS(fsys, mainConf, func(l Line) error {
		f := strings.Fields(l.Text)
		if len(f) == 0 {
			return nil
		}
		where := fmt.Sprintf("%s:%d: ", l.File, l.N)
		switch d := f[0]; {
		case strings.EqualFold(d, "SecRuleScript"):
			return fmt.Errorf("%sSecRuleScript (Lua) is not allowed: scripts would not run the same in both engines (and Lua would bind to Envoy's LuaJIT)", where)
		case strings.EqualFold(d, "SecRemoteRules"):
			return fmt.Errorf("%sSecRemoteRules is not allowed: remote rules cannot be checked", where)
		case strings.EqualFold(d, "SecRule"), strings.EqualFold(d, "SecAction"), strings.EqualFold(d, "SecDefaultAction"),
			strings.EqualFold(d, "SecRuleUpdateActionById"):
			rest := strings.TrimSpace(l.Text[len(d):])
			if strings.EqualFold(d, "SecRule") && strings.Contains(strings.ToLower(rest), "@inspectfile") {
				return fmt.Errorf("%soperator @inspectFile is not allowed: it runs a program for every request", where)
			}
			if execAction.MatchString(rest) {
				return fmt.Errorf("%saction exec: is not allowed: it runs a script or program", where)
			}
		}
		return nil
	})
	return err
}
