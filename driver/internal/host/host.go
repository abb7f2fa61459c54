// Package host reads the facts about this machine and checkout that every run
// records: kernel, CPU model, frequency governor, SMT state and git revision.
package host

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// facts is what Collect finds; empty strings mean "could not be read".
type facts struct {
	Kernel    string
	CPUModel  string
	NumCPU    int
	Governor  string
	SMT       string
	GoVersion string
	GitSHA    string
	GitDirty  bool
}

// Collect reads the facts; nothing here fails a run.
func Collect(repoDir string) facts {
	f := facts{NumCPU: runtime.NumCPU(), GoVersion: runtime.Version()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		f.Kernel = unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Machine[:])
	}
	f.CPUModel = cpuModel()
	f.Governor = firstLine("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "unavailable (no cpufreq)")
	f.SMT = firstLine("/sys/devices/system/cpu/smt/control", "unknown")
	if out, err := exec.Command("git", "-C", repoDir, "rev-parse", "HEAD").Output(); err == nil {
		f.GitSHA = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "-C", repoDir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		f.GitDirty = len(strings.TrimSpace(string(out))) > 0
	}
	return f
}

func cpuModel() string {
	fh, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func firstLine(path, fallback string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fallback
	}
	return strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
}

// FileSHA256 is the hex SHA-256 of a file's contents.
func FileSHA256(path string) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
