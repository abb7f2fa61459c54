// Package atomicfile writes files so that a reader, or a crash or a full
// disk part-way, sees either the old content or all of the new: the content
// goes to path.tmp, is synced, and is renamed over path.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// WriteFile writes b to path.tmp, syncs it and renames it over path, so
// path is either its old content or all of b. On any error the temporary
// file is removed: a full disk leaves no empty or partial file.
func WriteFile(path string, b []byte) error {
	return write(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// write is WriteFile for content produced by fill.
func write(path string, fill func(io.Writer) error) (err error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	if err = fill(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
