package report

import (
	"io"
	"slices"
	"strings"

	"wafbench/driver/chart"
)

// section writes one part of report.md from the run's figures; nothing
// when the run has nothing for it. A section reads no file and calls no
// tool: everything it shows is in Figures.
type section func(m *md, fig *figures)

// sections are the parts of report.md, in order.
var sections = []section{
	writeTitle,
	writeBrief,
	writeHeadline,
	writeProtection,
	writeDeployed,
	writeShards,
	writeBlocks,
	writeMethod,
	writeEnvironment,
	writeVersions,
	writeProvenance,
	writeResults,
	writeInstructions,
	writeInstructionAccount,
	writeRatios,
	writeVerdicts,
	writeBuilds,
	writeStartup,
	writeIntegrations,
	writeLab,
	writeGrowth,
	writeAdversarial,
	writeGates,
	writeOverload,
	writeSoak,
	writeSlow,
	writeMix,
	writeMaxRate,
	writeSendDelay,
	writeBaseline,
	writeOverhead,
	writePrecision,
	writePrecisionTargets,
	writeVariance,
	writeSteady,
	writeMemory,
	writeBehind,
	writeExcluded,
	writeLimitations,
	writeCharts,
	writeFlameSection,
	writeAccountSection,
	writeMatrixSection,
	writeLoadgenSection,
	writeByproductsSection,
}

// writeReport writes report.md: every section in order. Its output depends
// only on fig.
func writeReport(w io.Writer, fig *figures) error {
	m := &md{}
	for _, s := range sections {
		s(m, fig)
	}
	_, err := io.WriteString(w, m.b.String())
	return err
}

// writeTitle is the report's heading and the run's status line.
func writeTitle(m *md, fig *figures) {
	meta, s := fig.Meta, fig.Summary
	m.p("# wafbench report: %s", orNone(meta.Name))
	m.nl()
	m.p("Status **%s**; started %s, finished %s; suite `%s`; %d valid records, %d excluded.",
		orNone(meta.Status), orNone(meta.StartedUTC), orNone(meta.FinishedUTC), orNone(meta.Suite),
		len(fig.Records)-len(s.Excluded), len(s.Excluded))
	m.nl()
}

// writeCPUChart shows the CPU chart, when the run drew one.
func writeCPUChart(m *md, fig *figures) {
	if slices.Contains(fig.Charts, chart.CPUFile) {
		writeChart(m, chart.CPUFile)
		m.nl()
	}
}

func writeChart(m *md, c string) {
	m.p("![%s](%s/%s)", strings.TrimSuffix(c, ".svg"), ChartsDir, c)
}

// writeCharts links the charts drawn into charts/ but the CPU chart.
func writeCharts(m *md, fig *figures) {
	if len(fig.Charts) == 0 || slices.Equal(fig.Charts, []string{chart.CPUFile}) {
		return
	}
	m.p("## Charts")
	m.nl()
	for _, c := range fig.Charts {
		if c != chart.CPUFile {
			writeChart(m, c)
		}
	}
	m.nl()
	if n := len(fig.Summary.Workloads) * len(fig.Summary.Modes); n > chart.MaxStabilityPanels {
		m.p("The per-second chart is left out: it would have %d panels (workloads × modes; at most %d are drawn). The steady-state table above covers every window.", n, chart.MaxStabilityPanels)
		m.nl()
	}
}
