// Package repopath finds the wafbench checkout and makes recorded paths
// portable: what a run writes (meta.json, raw.jsonl, the preflight records
// and build manifests inside them, the report text) names a file inside the
// checkout relative to the repository root ("build/crs/main.conf", "." for
// the root itself), a file in the machine's temporary directory as
// "$TMPDIR/…" and one in the user's home directory as "$HOME/…". System
// paths (/usr/sbin/nginx) stay as they are: they are the same on every
// Debian machine.
package repopath

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Root returns the nearest directory at or above the working directory, or
// else above the running executable, that holds the wafbench go.mod.
func Root() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for {
			if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module wafbench\n")) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("no wafbench checkout above the working directory or the executable")
}

// Markers for paths outside the checkout.
const (
	TempMarker = "$TMPDIR"
	homeMarker = "$HOME"
)

// prefixes lists the absolute directories Portable rewrites, in the order it
// rewrites them, each with its replacement: the checkout root (when found)
// first, since it may lie inside the home or temporary directory.
func prefixes() [][2]string {
	root, _ := Root()
	return prefixesFor(root)
}

func prefixesFor(root string) [][2]string {
	var out [][2]string
	add := func(dir, repl string) {
		dir = strings.TrimRight(filepath.Clean(dir), "/")
		if dir == "" || dir == "." || !filepath.IsAbs(dir) {
			return
		}
		for _, p := range out {
			if p[0] == dir {
				return
			}
		}
		out = append(out, [2]string{dir, repl})
	}
	if root != "" {
		add(root, "")
	}
	add(os.TempDir(), TempMarker)
	add("/tmp", TempMarker)
	if home, err := os.UserHomeDir(); err == nil && home != "/" {
		add(home, homeMarker)
	}
	return out
}

// Portable rewrites every absolute path in b that lies in the checkout
// (found with Root), the temporary directory or the home directory, as the
// package comment describes. A path counts only where it starts: after a
// byte that cannot be part of a path (a quote, a space, '=', ':'…) or at
// the start of b.
func Portable(b []byte) []byte {
	return rewrite(b, prefixes())
}

// PortableFrom is Portable with the checkout at root (the checkout a run
// was recorded in, which need not be this one).
func PortableFrom(b []byte, root string) []byte {
	return rewrite(b, prefixesFor(root))
}

// portableString is Portable for one string.
func portableString(s string) string { return string(Portable([]byte(s))) }

func rewrite(b []byte, prefixes [][2]string) []byte {
	for _, p := range prefixes {
		b = ReplaceDir(b, p[0], p[1])
	}
	return b
}

// pathByte reports whether c can be part of a path name.
func pathByte(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == '@' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// ReplaceDir rewrites dir and dir/… where they start a path: dir/x becomes
// repl/x (x alone when repl is empty), dir alone becomes repl ("." when
// empty). dir followed by another name byte (dir2/…) is left alone.
func ReplaceDir(b []byte, dir, repl string) []byte {
	needle := []byte(dir)
	if !bytes.Contains(b, needle) {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b))
	for {
		i := bytes.Index(b, needle)
		if i < 0 {
			out.Write(b)
			return out.Bytes()
		}
		end := i + len(needle)
		startOK := i == 0 || !pathByte(b[i-1])
		switch {
		case !startOK:
			out.Write(b[:end])
		case end < len(b) && b[end] == '/':
			out.Write(b[:i])
			if repl == "" {
				end++ // "dir/x" → "x"
			} else {
				out.WriteString(repl)
			}
		case end == len(b) || !pathByte(b[end]):
			out.Write(b[:i])
			if repl == "" {
				out.WriteString(".")
			} else {
				out.WriteString(repl)
			}
		default:
			out.Write(b[:end])
		}
		b = b[end:]
	}
}
