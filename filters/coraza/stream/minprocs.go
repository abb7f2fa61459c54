//go:build !wafbench_maxprocs1

package stream

// MinMaxProcs is 2: DefaultMaxProcs (goruntime.go) says why.
const MinMaxProcs = 2
