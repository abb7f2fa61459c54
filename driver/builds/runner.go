package builds

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"wafbench/driver/child"
	"wafbench/driver/internal/host"
)

// facts is what an engine script writes to $WB_OUT/facts.json (see the
// contract at the top of scripts/engines/modsecurity.sh).
type facts struct {
	EngineVersion   string             `json:"engine_version"`
	CompilerVersion string             `json:"compiler_version"`
	Flags           map[string]string  `json:"flags"`
	Steps           map[string]float64 `json:"steps"`
	SharedLibDir    string             `json:"shared_lib_dir"`
	Notes           map[string]string  `json:"notes"`
}

// Runner builds recipes of a Set into Root/build/engines.
type Runner struct {
	Root   string    // repository root
	Set    *Set      // the recipes
	Stderr io.Writer // progress lines
	Jobs   int       // parallel compile jobs (make -j); 0 means 2
	Force  bool      // rebuild even when up to date
	// Heartbeat is how often a long step reports that it is still running;
	// 0 means 30 s.
	Heartbeat time.Duration
}

// status is what Runner.Check finds for one build.
type status struct {
	Build      *Build
	RecipeHash string
	UpToDate   bool
	Reason     string // "up to date", "not built", "recipe changed", a profile problem …
	Profile    *profileRef
	ProfileErr error // pgo builds: why the profile cannot be used
}

// check computes a build's recipe hash and whether its directory holds that
// build already. A pgo build without a usable profile has ProfileErr set.
func (r *Runner) check(b *Build) (*status, error) {
	st := &status{Build: b}
	profileSHA := ""
	if b.PGO != nil {
		ref, err := r.Set.checkProfile(r.Root, b)
		if err != nil {
			st.ProfileErr, st.Reason = err, "no usable profile"
			return st, nil
		}
		st.Profile, profileSHA = ref, ref.SHA256
	}
	hash, err := recipeHash(r.Root, b, toolchainVersion(b), profileSHA)
	if err != nil {
		return nil, err
	}
	st.RecipeHash = hash
	st.UpToDate, st.Reason = upToDate(b.Dir(r.Root), hash)
	return st, nil
}

// toolchainVersion is the first line of the compiler's version output ("" if
// it cannot run: the build script then says which package is missing).
func toolchainVersion(b *Build) string {
	var out []byte
	var err error
	switch {
	case b.Compiler == "go":
		out, err = exec.Command("go", "version").Output()
	case strings.HasPrefix(b.Compiler, "clang"):
		out, err = exec.Command("clang++"+strings.TrimPrefix(b.Compiler, "clang"), "--version").Output()
	default:
		out, err = exec.Command(b.Compiler, "--version").Output()
	}
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}

// errBuild marks a failed build script run; the message carries its last line.
var errBuild = errors.New("build failed")

// build makes b unless it is up to date. The engine script runs into a fresh
// temporary directory that replaces the build's directory only after the
// script succeeded, the module is there and the manifest is written. It
// returns the manifest and whether anything was built.
func (r *Runner) build(ctx context.Context, b *Build) (*manifest, bool, error) {
	st, err := r.check(b)
	if err != nil {
		return nil, false, err
	}
	if st.ProfileErr != nil {
		return nil, false, st.ProfileErr
	}
	dir := b.Dir(r.Root)
	if st.UpToDate && !r.Force {
		fmt.Fprintf(r.Stderr, "%s: up to date (%s)\n", b.Mode(), rel(r.Root, dir))
		m, err := ReadManifest(dir)
		return m, false, err
	}
	fmt.Fprintf(r.Stderr, "%s: building (%s) into %s\n", b.Mode(), st.Reason, rel(r.Root, dir))
	script := filepath.Join(r.Root, "scripts", "engines", b.Engine+".sh")
	if _, err := os.Stat(script); err != nil {
		return nil, false, fmt.Errorf("build %s: no build script %s", b.Mode(), rel(r.Root, script))
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, false, err
	}
	tmp, err := os.MkdirTemp(parent, ".tmp-"+b.dirName()+"-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(tmp) // gone after the rename; removes a failed attempt
	defer os.Remove(tmp + ".sh")
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, false, err
	}
	cache := filepath.Join(r.Root, "build", "src")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, false, err
	}
	start := time.Now()
	// bash reads a script while it runs: run a copy, so that an edit during
	// a long build cannot change what the running build executes.
	copied, err := copyScript(script, tmp)
	if err != nil {
		return nil, false, err
	}
	if err := r.run(ctx, b.Mode(), "building", r.env(b, tmp, cache, st.Profile), "bash", copied); err != nil {
		return nil, false, err
	}
	m, err := r.manifest(b, st, tmp, start)
	if err != nil {
		return nil, false, err
	}
	if err := writeManifest(tmp, m); err != nil {
		return nil, false, err
	}
	if err := replaceDir(tmp, dir); err != nil {
		return nil, false, err
	}
	fmt.Fprintf(r.Stderr, "%s: built in %s: %s (%.1f MB, sha256 %.12s…)\n", b.Mode(),
		time.Since(start).Round(time.Second), rel(r.Root, filepath.Join(dir, m.Module)), float64(m.ModuleBytes)/1e6, m.ModuleSHA256)
	return m, true, nil
}

// env is the script contract's environment (see scripts/engines/modsecurity.sh).
func (r *Runner) env(b *Build, out, cache string, prof *profileRef) []string {
	b01 := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	jobs := r.Jobs
	if jobs <= 0 {
		jobs = 2
	}
	modfile, profile := "", ""
	if mf := b.modfile(); mf != "" {
		modfile = filepath.Join(r.Root, mf)
	}
	if prof != nil {
		profile = filepath.Join(r.Root, prof.File)
	}
	var alloc source
	if b.Allocator != nil {
		alloc = *b.Allocator
	}
	return append(os.Environ(),
		"WB_ROOT="+r.Root,
		"WB_BUILD="+b.Mode(),
		"WB_ENGINE="+b.Engine,
		"WB_VERSION="+b.Version,
		"WB_OUT="+out,
		"WB_CACHE="+cache,
		fmt.Sprintf("WB_JOBS=%d", jobs),
		"WB_SOURCE_KIND="+b.Source.Kind,
		"WB_SOURCE_PACKAGE="+b.Source.Package,
		"WB_SOURCE_SUITE="+b.Source.Suite,
		"WB_SOURCE_ARCHIVE="+b.Source.Archive,
		"WB_SOURCE_SHA256="+b.Source.SHA256,
		"WB_MODFILE="+modfile,
		"WB_COMPILER="+b.Compiler,
		"WB_FLAGS="+b.Flags,
		"WB_LTO="+b.LTO,
		"WB_LINK="+b.Link,
		"WB_TAGS="+strings.Join(b.Tags, " "),
		"WB_INSTRUMENT="+b01(b.Instrument),
		"WB_PROFILE="+profile,
		"WB_ALLOC_PACKAGE="+alloc.Package,
		"WB_ALLOC_SUITE="+alloc.Suite,
		"WB_ALLOC_ARCHIVE="+alloc.Archive,
		"WB_ALLOC_SHA256="+alloc.SHA256,
		"WB_CTYPE="+b.Ctype,
	)
}

// run runs name with args and env (from the repository root, as a
// child.Process: its own process group, killed if the driver dies, stopped
// with SIGTERM to the group, then SIGKILL after 30 s, when ctx ends) with its
// output passed through to Stderr, printing a heartbeat (last line, elapsed
// time) while it runs. On failure the error carries its last line.
func (r *Runner) run(ctx context.Context, label, doing string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = r.Root
	cmd.Env = env
	cmd.Stdout = r.Stderr
	cmd.WaitDelay = 30 * time.Second // a leftover holding stderr cannot hang Wait
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	var mu sync.Mutex
	last := ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(r.Stderr, line)
			if strings.TrimSpace(line) != "" {
				mu.Lock()
				last = line
				mu.Unlock()
			}
		}
		io.Copy(io.Discard, pr)
	}()
	beat := r.Heartbeat
	if beat <= 0 {
		beat = 30 * time.Second
	}
	start := time.Now()
	tick := time.NewTicker(beat)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-tick.C:
				mu.Lock()
				l := last
				mu.Unlock()
				fmt.Fprintf(r.Stderr, "%s: still %s, %s elapsed (last: %s)\n", label, doing, time.Since(start).Round(time.Second), l)
			case <-stop:
				return
			}
		}
	}()
	p, err := child.Start(cmd, nil)
	if err == nil {
		select {
		case <-p.Done():
		case <-ctx.Done():
			p.Stop(syscall.SIGTERM, 30*time.Second)
		}
		err = p.ExitErr()
	}
	tick.Stop()
	close(stop)
	pw.Close()
	<-done
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		mu.Lock()
		l := last
		mu.Unlock()
		l = strings.TrimPrefix(l, label+": ")
		if l == "" {
			l = err.Error()
		}
		return fmt.Errorf("%s: %s: %w", label, l, errBuild)
	}
	return nil
}

// manifest checks the script's output in out and describes it.
func (r *Runner) manifest(b *Build, st *status, out string, start time.Time) (*manifest, error) {
	module := b.ModuleFile()
	fi, err := os.Stat(filepath.Join(out, module))
	if err != nil || fi.Size() == 0 {
		return nil, fmt.Errorf("build %s: the script succeeded but wrote no %s: %w", b.Mode(), module, errBuild)
	}
	sum, err := host.FileSHA256(filepath.Join(out, module))
	if err != nil {
		return nil, err
	}
	var f facts
	data, err := os.ReadFile(filepath.Join(out, "facts.json"))
	if err != nil {
		return nil, fmt.Errorf("build %s: the script wrote no facts.json: %w", b.Mode(), errBuild)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("build %s: facts.json: %v: %w", b.Mode(), err, errBuild)
	}
	if f.EngineVersion == "" || f.CompilerVersion == "" {
		return nil, fmt.Errorf("build %s: facts.json lacks engine_version or compiler_version: %w", b.Mode(), errBuild)
	}
	if strings.TrimPrefix(f.EngineVersion, "v") != strings.TrimPrefix(b.Version, "v") {
		return nil, fmt.Errorf("build %s: built engine version %s, the recipe says %s: %w", b.Mode(), f.EngineVersion, b.Version, errBuild)
	}
	if f.SharedLibDir != "" {
		if _, err := os.Stat(filepath.Join(out, f.SharedLibDir)); err != nil {
			return nil, fmt.Errorf("build %s: shared_lib_dir %s missing: %w", b.Mode(), f.SharedLibDir, errBuild)
		}
	}
	m := &manifest{
		Build: b.Mode(), Engine: b.Engine, EngineVersion: f.EngineVersion, Source: b.Source,
		Compiler: b.Compiler, CompilerVersion: f.CompilerVersion, Flags: f.Flags, LTO: b.LTO, Link: b.Link,
		Tags: b.Tags, Instrument: b.Instrument, Allocator: b.Allocator, Ctype: b.Ctype, Module: module, ModuleSHA256: sum, ModuleBytes: fi.Size(),
		SharedLibDir: f.SharedLibDir, Profile: st.Profile, Notes: f.Notes, Steps: f.Steps,
		RecipeHash: st.RecipeHash, GitSHA: gitSHA(r.Root), BuiltUTC: time.Now().UTC().Truncate(time.Second),
		BuildSeconds: time.Since(start).Round(100 * time.Millisecond).Seconds(),
	}
	if len(m.Notes) == 0 {
		m.Notes = nil // as read back (omitempty)
	}
	if mf := b.modfile(); mf != "" {
		m.Modfile = mf
		if m.ModfileSHA256, err = host.FileSHA256(filepath.Join(r.Root, mf)); err != nil {
			return nil, err
		}
	}
	if m.Profile != nil {
		if ev := f.Notes["profile_applied"]; ev != "" {
			m.Profile.Evidence = ev
		}
	}
	return m, nil
}

// copyScript copies script to dir+".sh" (beside dir, which the script
// fills) and returns that path; the caller removes it.
func copyScript(script, dir string) (string, error) {
	data, err := os.ReadFile(script)
	if err != nil {
		return "", err
	}
	p := dir + ".sh"
	return p, os.WriteFile(p, data, 0o755)
}

// replaceDir moves the finished build tmp to dir, replacing an older build.
func replaceDir(tmp, dir string) error {
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// gitSHA is the repository's HEAD commit, "" outside a git checkout.
func gitSHA(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// execOutput runs a short command and returns its standard output.
func execOutput(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if s := strings.TrimSpace(stderr.String()); s != "" {
			return "", fmt.Errorf("%v: %s", err, s)
		}
		return "", err
	}
	return string(out), nil
}
