package indexing

import (
	"fmt"
	"maps"
	"runtime"
	"testing"
)

// BenchmarkMemoryPerEntry fills the indices of Kopf's examples/16-indexing
// with 10,000 pods (is_running: one entry per pod under its own key;
// by_label: two, under app=bench, shared by every pod, and pod=<name>)
// and reports the heap they hold per entry, with the strings they keep
// (a pod's name, its labels; the object's key is the watch's, not
// counted), apart from anything else:
//
//	go test -run '^$' -bench MemoryPerEntry -benchtime 3x ./runtime/indexing/
func BenchmarkMemoryPerEntry(b *testing.B) {
	const n = 10000
	objs := make([]string, n)
	for i := range objs {
		objs[i] = fmt.Sprintf("default/pod-%05d", i)
	}
	var perEntry float64
	for b.Loop() {
		before := heap()
		running := New[[2]string, bool]()
		byLabel := New[[2]string, string]()
		for i, obj := range objs {
			name := fmt.Sprintf("pod-%05d", i)
			running.x.replace(obj, maps.All(map[[2]string]bool{{"default", name}: false}))
			byLabel.x.replace(obj, maps.All(map[[2]string]string{{"app", "bench"}: name, {"pod", name}: name}))
		}
		perEntry = float64(heap()-before) / (3 * n)
		runtime.KeepAlive(running)
		runtime.KeepAlive(byLabel)
	}
	b.ReportMetric(perEntry, "B/entry")
}

func heap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
