package report

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"wafbench/driver/protection"
	"wafbench/driver/result"
)

// A run directory holds two kinds of file: what Build reads or writes (the
// raw files, the engine benchmarks, the request matrix, the per-window
// folded stacks; the reports, charts and flame-graph SVGs) and by-products
// of the run that no report needs: host logs and configs per trial, admin
// stats dumps, perf.data and perf's flat reports. A kept run (wafbench keep)
// holds its by-products in one archive, listed in ByproductsList.
const (
	ByproductsArchive = "byproducts.tar.xz"
	ByproductsList    = "byproducts.txt"
)

// ByproductHostLogs is Byproduct's kind of a host's log: text, whatever
// bytes the requests it logs carried.
const ByproductHostLogs = "host logs"

// Byproduct classifies rel, a slash-separated path inside a run directory:
// the kind of by-product it is ("host logs", …), or "" for a file the
// report needs, writes or is the archive itself.
func Byproduct(rel string) string {
	base := path.Base(rel)
	dir := path.Dir(rel)
	switch {
	case dir == "." && (base == "meta.json" || base == "raw.jsonl" || base == "raw.jsonl.gz" || base == engineBenchFile ||
		base == matrixFile || base == "matrix.csv" || base == SummaryFile || base == BenchFile ||
		base == ReportFile || base == HTMLFile || base == ByproductsArchive || base == ByproductsList ||
		base == "README.md" || base == loadgenFile):
		return ""
	case dir == ChartsDir:
		return ""
	case dir == "." && (base == "crs-test.json" || base == "crs-test.json.gz" || base == "crs-test.md" || base == result.ProtectionFile || base == protection.File):
		return "" // wafbench crs-test: its results, the report rebuilt from them (driver/conformance), a run's protection records
	case dir == "." && base == "crs-test.csv":
		return "per-test CSV (crs-test.json holds the same)"
	case dir == "perf" && (strings.HasSuffix(base, ".svg") || (strings.HasPrefix(base, "t") || strings.HasPrefix(base, "engine-")) &&
		(strings.HasSuffix(base, ".folded") || strings.HasSuffix(base, ".folded.gz"))):
		return "" // per-window stacks, and the engine benchmarks' (benchProfile) that "Where the overhead goes" reads
	case dir == "perf" && strings.HasPrefix(base, "flame-") && strings.HasSuffix(base, ".folded"):
		return "merged folded stacks"
	case dir == "perf":
		return "perf's flat reports (perf.data is not kept)"
	case dir == "stats":
		return "admin stats per trial"
	case strings.HasSuffix(base, ".log") || strings.HasSuffix(base, ".stderr"):
		return ByproductHostLogs
	case strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".conf") || strings.HasSuffix(base, ".json"):
		return "host configs"
	}
	return "other files"
}

// byproductsStats is what a kept run's ByproductsList says: files and
// bytes per kind of by-product, kinds in the list's order.
type byproductsStats struct {
	kinds []*byproductKind
	total int64 // bytes
}

type byproductKind struct {
	name  string
	files int
	bytes int64
}

// readByproducts reads dir's ByproductsList; nil when the run has none (a
// run as `run` left it keeps its by-products beside the report).
func readByproducts(dir string) (*byproductsStats, error) {
	file, err := os.Open(filepath.Join(dir, ByproductsList))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	st := &byproductsStats{}
	byName := map[string]*byproductKind{}
	sc := bufio.NewScanner(file)
	for line := 1; sc.Scan(); line++ {
		// "<sha256>  <bytes>  <path>"
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			return nil, fmt.Errorf("%s:%d: want \"sha256  bytes  path\", got %q", ByproductsList, line, sc.Text())
		}
		n, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: bytes: %w", ByproductsList, line, err)
		}
		name := Byproduct(fields[2])
		if name == "" {
			name = "other files"
		}
		k := byName[name]
		if k == nil {
			k = &byproductKind{name: name}
			byName[name] = k
			st.kinds = append(st.kinds, k)
		}
		k.files++
		k.bytes += n
		st.total += n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return st, nil
}

// writeByproductsSection says where the run's by-products are: in
// ByproductsArchive, as ByproductsList lists them. Nothing when the run has
// no list.
func writeByproductsSection(m *md, fig *figures) {
	st := fig.Byproducts
	if st == nil {
		return
	}
	m.nl()
	m.p("## By-products")
	m.nl()
	m.p("This run was kept (`wafbench keep`): the files no report needs are in `%s`, %s MB uncompressed, each listed with its size and SHA-256 in `%s`; `tar -xJf %s` in this directory puts them back where the run wrote them.", ByproductsArchive, f(float64(st.total)/1e6, 1), ByproductsList, ByproductsArchive)
	m.nl()
	m.head("by-product", "files", "MB")
	for _, k := range st.kinds {
		m.row(k.name, itoa(k.files), f(float64(k.bytes)/1e6, 1))
	}
}
