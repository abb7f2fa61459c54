package report

import "strings"

// matrixFile is the request matrix's Markdown that `run` writes into a run
// directory after its trials (driver/matrix.MarkdownFile).
const matrixFile = "matrix.md"

// readMatrix reads dir's MatrixFile; nil when the run has none.
func readMatrix(dir string) ([]byte, error) {
	b, ok, err := readOptional(dir, matrixFile)
	if ok && b == nil {
		b = []byte{}
	}
	return b, err
}

// writeMatrixSection appends the run's request matrix (the verdicts of every
// mode on a request corpus, written by driver/matrix) to the report, its
// headings one level down, so the report and its HTML carry the verdicts the
// run was measured under. Nothing is written when the run has no matrix.
func writeMatrixSection(m *md, fig *figures) {
	if fig.Matrix == nil {
		return
	}
	m.b.WriteString("\n")
	for _, line := range strings.SplitAfter(string(fig.Matrix), "\n") {
		if strings.HasPrefix(line, "#") {
			line = "#" + line
		}
		m.b.WriteString(line)
	}
}
