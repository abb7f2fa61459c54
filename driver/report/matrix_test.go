package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteMatrixSection(t *testing.T) {
	dir := t.TempDir()
	var none strings.Builder
	if err := writeMatrixSection(&none, dir); err != nil || none.Len() != 0 {
		t.Fatalf("no matrix.md: got %q, %v; want nothing", none.String(), err)
	}
	in := "# Request matrix: corpus `lab`\n\ntext\n\n## Verdicts by mode\n\n| mode |\n| --- |\n| `coraza` |\n"
	if err := os.WriteFile(filepath.Join(dir, MatrixFile), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	if err := writeMatrixSection(&got, dir); err != nil {
		t.Fatal(err)
	}
	want := "\n## Request matrix: corpus `lab`\n\ntext\n\n### Verdicts by mode\n\n| mode |\n| --- |\n| `coraza` |\n"
	if got.String() != want {
		t.Errorf("got %q, want %q", got.String(), want)
	}
}
