package rulefiles

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// Bundle is a rule set's files in memory, by absolute path: what the Coraza
// Wasm filter receives in its plugin configuration, since Envoy gives a
// Wasm VM no file system. It is an fs.FS (also ReadFileFS, GlobFS and
// StatFS) that takes absolute paths, so an engine reads the same paths it
// would read from disk.
type Bundle map[string]string

// ReadBundle reads every file an engine loads for mainConf (see Walk).
func ReadBundle(mainConf string) (Bundle, error) {
	files, err := Walk(mainConf, nil)
	if err != nil {
		return nil, err
	}
	b := Bundle{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		b[f] = string(data)
	}
	return b, nil
}

func (b Bundle) clean(name string) string {
	if !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	return path.Clean(name)
}

// ReadFile returns the content of name.
func (b Bundle) ReadFile(name string) ([]byte, error) {
	data, ok := b[b.clean(name)]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return []byte(data), nil
}

// Open opens a file of the bundle (directories are not listed).
func (b Bundle) Open(name string) (fs.File, error) {
	data, err := b.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &bundleFile{Reader: bytes.NewReader(data), info: fileInfo{name: path.Base(name), size: int64(len(data))}}, nil
}

// Stat describes a file of the bundle.
func (b Bundle) Stat(name string) (fs.FileInfo, error) {
	data, ok := b[b.clean(name)]
	if !ok {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return fileInfo{name: path.Base(name), size: int64(len(data))}, nil
}

// Glob returns the bundle's files matching pattern, in name order.
func (b Bundle) Glob(pattern string) ([]string, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	var out []string
	for name := range b {
		if ok, _ := path.Match(b.clean(pattern), name); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

type bundleFile struct {
	*bytes.Reader
	info fileInfo
}

func (f *bundleFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *bundleFile) Close() error               { return nil }

var _ io.ReadSeeker = (*bundleFile)(nil)

type fileInfo struct {
	name string
	size int64
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }
