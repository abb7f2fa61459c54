//go:build wafbench_maxprocs1

package stream

// MinMaxProcs is 1 in the coraza@maxprocs1 build: the runtime keeps its
// own choice, as the module did before it raised GOMAXPROCS.
const MinMaxProcs = 1
