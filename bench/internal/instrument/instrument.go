// Package instrument is the measurement hooks shared by every contender
// binary of the benchmark, so that they carry the same overhead:
//
//   - BENCH_PPROF=127.0.0.1:PORT serves net/http/pprof there, plus
//     /debug/settle, which runs a garbage collection and returns freed
//     memory to the OS (so that the harness reads a settled RSS);
//   - BENCH_CPUPROFILE=FILE writes a CPU profile from start to Stop.
package instrument

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"runtime/debug"
	rpprof "runtime/pprof"
)

var profile *os.File

// Start starts what the environment asks for. Errors are printed and
// ignored: the contender runs uninstrumented rather than not at all.
func Start() {
	if addr := os.Getenv("BENCH_PPROF"); addr != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/settle", func(w http.ResponseWriter, _ *http.Request) {
			runtime.GC()
			debug.FreeOSMemory()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			fmt.Fprintf(w, "heap_inuse %d\nheap_alloc %d\nstack_inuse %d\nsys %d\nheap_released %d\ngoroutines %d\n",
				ms.HeapInuse, ms.HeapAlloc, ms.StackInuse, ms.Sys, ms.HeapReleased, runtime.NumGoroutine())
		})
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench instrument: %v\n", err)
		} else {
			go func() { _ = http.Serve(ln, mux) }()
		}
	}
	if path := os.Getenv("BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = rpprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench instrument: %v\n", err)
			return
		}
		profile = f
	}
}

// Stop finishes the CPU profile, if any.
func Stop() {
	if profile != nil {
		rpprof.StopCPUProfile()
		_ = profile.Close()
		profile = nil
	}
}
