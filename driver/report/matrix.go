package report

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MatrixFile is the request matrix's Markdown that `run` writes into a run
// directory after its trials (driver/matrix.MarkdownFile).
const MatrixFile = "matrix.md"

// writeMatrixSection appends the run's request matrix (the verdicts of every
// mode on a request corpus, written by driver/matrix) to the report, its
// headings one level down, so the report and its HTML carry the verdicts the
// run was measured under. Nothing is written when the run has no matrix.
func writeMatrixSection(w io.Writer, dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, MatrixFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var out strings.Builder
	out.WriteString("\n")
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			line = "#" + line
		}
		out.WriteString(line)
	}
	_, err = io.WriteString(w, out.String())
	return err
}
