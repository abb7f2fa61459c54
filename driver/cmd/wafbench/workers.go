package main

import (
	"fmt"

	"wafbench/driver/cpu"
)

// workersNote says when --concurrency asks for more Envoy workers than
// Envoy has CPUs: the workers then time-share those CPUs, so a scale run
// measures contention, not scaling. Empty when every worker has a CPU.
func workersNote(concurrency int, envoyCPUs []int) string {
	if concurrency <= len(envoyCPUs) {
		return ""
	}
	return fmt.Sprintf("--concurrency %d: %d Envoy workers share %d CPU(s) (%s); beyond the CPUs, throughput per worker measures time-sharing, not scaling (a scale run needs --concurrency ≤ the Envoy CPUs)",
		concurrency, concurrency, len(envoyCPUs), cpu.Format(envoyCPUs))
}
