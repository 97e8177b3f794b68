package watching

import "testing"

// reportCPU, deferred at the start of a benchmark, reports the process's
// CPU time per operation (user and system, of every thread: the garbage
// collector's included) as cpu-ns/op. On a shared machine it varies far
// less than the wall time of ns/op, which counts the time other processes
// hold the cores.
func reportCPU(b *testing.B) func() {
	b.Helper()
	start, ok := cpuTime(b)
	return func() {
		if end, _ := cpuTime(b); ok && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
