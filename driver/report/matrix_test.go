package report

import (
	"os"
	"path/filepath"
	"testing"
)

// matrixSection is the matrix section of the run in dir.
func matrixSection(t *testing.T, dir string) string {
	t.Helper()
	b, err := readMatrix(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := &md{}
	writeMatrixSection(m, &figures{Matrix: b})
	return m.b.String()
}

func TestWriteMatrixSection(t *testing.T) {
	dir := t.TempDir()
	if got := matrixSection(t, dir); got != "" {
		t.Fatalf("no matrix.md: got %q; want nothing", got)
	}
	in := "# Request matrix: corpus `lab`\n\ntext\n\n## Verdicts by mode\n\n| mode |\n| --- |\n| `coraza` |\n"
	if err := os.WriteFile(filepath.Join(dir, matrixFile), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "\n## Request matrix: corpus `lab`\n\ntext\n\n### Verdicts by mode\n\n| mode |\n| --- |\n| `coraza` |\n"
	if got := matrixSection(t, dir); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
