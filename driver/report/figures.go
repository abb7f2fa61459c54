package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"wafbench/driver/chart"
	"wafbench/driver/perf/flame"
	"wafbench/driver/result"
	"wafbench/driver/stats"
)

// figures is everything a run's report shows, computed once from the run
// directory: its meta and raw records, the optional inputs beside them
// (engine-bench.txt, loadgen.jsonl, matrix.md, the folded stacks of a
// --perf run, the by-products list of a kept run), and the analyses the
// sections read (summary statistics, growth fits, lab pooling, cost
// account). The sections and the summary write Figures and read nothing
// else: no file, no tool.
type figures struct {
	Meta    *result.Meta
	Records []result.Record // after quality checks: impossible ones marked failed
	Summary *stats.Summary
	Quality *quality
	Growth  *growthFigures
	Lab     *labRun // nil unless the lab suite
	Brief   *brief  // the first screen: every CPU ratio with its verdicts

	Overhead   *overhead        // engine-bench.txt; nil for none
	Account    []*accountRow    // the cost account of the profiled windows
	Matrix     []byte           // matrix.md; nil for none
	Loadgen    *loadgenRun      // loadgen.jsonl; nil for none
	Byproducts *byproductsStats // the by-products list of a kept run; nil for none

	Deployed *deployedFigures // protection-deployed.json; nil for none

	Charts []string   // charts/*.svg drawn (chart.WriteAll)
	Flames *flame.Set // flame graphs drawn; nil without profiles
	Files  []string   // every regular file of the run, slash-separated, sorted
}

// analyse computes the figures of meta and recs (the records as read,
// dropped torn lines): everything that needs no other file.
func analyse(meta *result.Meta, recs []result.Record, dropped int) *figures {
	q := &quality{PartialDropped: dropped}
	recs = q.check(recs)
	// run --compare was checked against the run's modes before it ran.
	pairs, _ := stats.ParsePairs(meta.Flags[CompareFlag])
	s := stats.SummarizePairs(recs, pairs)
	return &figures{Meta: meta, Records: recs, Summary: s, Quality: q,
		Growth: analyseGrowth(meta, recs), Lab: analyseLab(meta, recs, s), Brief: analyseBrief(s)}
}

// readRun reads dir's meta (with its protection record) and raw records.
func readRun(dir string) (*result.Meta, []result.Record, int, error) {
	meta, err := result.ReadMeta(dir)
	if err != nil {
		return nil, nil, 0, err
	}
	if meta.Protection, err = result.ReadProtection(dir); err != nil {
		return nil, nil, 0, err
	}
	recs, dropped, err := result.ReadRecords(dir)
	return meta, recs, dropped, err
}

// readInputs adds the figures of dir's optional inputs to fig.
func readInputs(dir string, fig *figures) error {
	var err error
	if fig.Overhead, err = readOverhead(dir, fig.Summary); err != nil {
		return err
	}
	if fig.Account, err = readAccount(dir, fig.Records); err != nil {
		return err
	}
	if fig.Matrix, err = readMatrix(dir); err != nil {
		return err
	}
	if fig.Loadgen, err = readLoadgen(dir); err != nil {
		return err
	}
	fig.Byproducts, err = readByproducts(dir)
	return err
}

// draw writes the run's pictures into dir — the charts, the growth charts
// and the flame graphs — and records what it drew in fig.
func draw(dir string, fig *figures) error {
	var err error
	if fig.Charts, err = chart.WriteAll(filepath.Join(dir, ChartsDir), fig.Summary, fig.Records); err != nil {
		return fmt.Errorf("charts: %w", err)
	}
	if err := writeGrowthCharts(filepath.Join(dir, ChartsDir), fig.Meta, fig.Growth); err != nil {
		return fmt.Errorf("growth charts: %w", err)
	}
	if err := drawDeployed(filepath.Join(dir, ChartsDir), fig.Deployed); err != nil {
		return fmt.Errorf("frontier charts: %w", err)
	}
	if fig.Flames, err = flame.Draw(dir, fig.Meta.Modes, fig.Meta.Flags[PerfDiffFlag], fig.Records); err != nil {
		return fmt.Errorf("flame graphs: %w", err)
	}
	return nil
}

// listFiles lists every regular file under dir, slash-separated and
// relative to it, with extra (files about to be written) added; sorted.
func listFiles(dir string, extra ...string) ([]string, error) {
	out := slices.Clone(extra)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			if rel = filepath.ToSlash(rel); !slices.Contains(extra, rel) {
				out = append(out, rel)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list files of %s: %w", dir, err)
	}
	slices.Sort(out)
	return out, nil
}

// readOptional reads dir/name; ok is false when the run has no such file.
func readOptional(dir, name string) (b []byte, ok bool, err error) {
	b, err = os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}
