// Command daemons is issue #12's benchmark of daemons and timers: N
// objects (10,000 by default), each with a sharp timer at an interval of 1
// s, and separately each with an idle daemon (one that waits for its
// stop), against the empty operator (the same objects watched by an
// on.event handler that does nothing). Kopf cannot run here (no Python),
// so the baseline is kopf-go's own empty operator.
//
//	cd bench && go run ./cmd/daemons -n 10000        # ~5 minutes on 2 cores
//	cd bench && go run ./cmd/daemons -n 1000 -only timers
//
// It is independent of `make bench` and of cmd/bench: one control plane
// (e2e/cluster, binaries from bin/k8s or $KUBEBUILDER_ASSETS), N objects
// created once, then one operator process per mode (this same binary,
// re-executed with DAEMONS_BENCH_MODE set), in turn: empty, timers,
// daemons. Each operator measures itself, so that nothing of the
// harness is counted: once every timer has ticked (or every daemon has
// started) and a warm-up has passed, CPU time over a window (from
// /proc/self/stat), the settled memory (after runtime.GC and
// debug.FreeOSMemory: VmRSS and the Go heap in use), the timers' lag
// against their grid during the window (a sharp timer at 1 s ticks on the
// grid of its first tick: the lag of a tick is its start's distance past
// the grid), and, on the stop, how long until every daemon has returned.
// The harness prints a Markdown section for bench/RESULTS.md.
//
// With timers, the objects end with the timers' finalizer (Kopf's: added
// when a timer first matches, kept when the operator exits), and a last
// operator, "watched-final", watches them again: the watched object as an
// operator with timers has it, the baseline of "per waiting timer above
// the watched object". -before runs another build's timers in the same
// run ("timers-before"), for before/after ratios on a shared machine;
// -heapprofiles writes each operator's settled heap profile:
//
//	cd bench && go build -o /tmp/before ./cmd/daemons    # at the earlier commit
//	cd bench && go run ./cmd/daemons -n 10000 -only timers -before /tmp/before -heapprofiles /tmp/prof
//	go tool pprof -sample_index=inuse_space -top /tmp/prof/timers.pprof
//
// The first timers' run is the operator's first start: it adds the
// finalizer to every object while its timers already tick. A later one
// (timers-before) starts on objects that carry it, as after a restart,
// unless -firststart removes the finalizer from every object before each
// timers' run: each then measures a first start.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/bench/internal/child"
	"github.com/kopf-go/kopf/bench/internal/plane"
)

var gvr = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// report is what one operator process measures of itself.
type report struct {
	Mode          string  `json:"mode"`
	N             int     `json:"n"`
	ReadySeconds  float64 `json:"ready_seconds"`  // from start to every timer ticked / daemon started
	WindowSeconds float64 `json:"window_seconds"` // the CPU window
	CPUPerSecond  float64 `json:"cpu_per_second"` // CPU seconds per second over the window
	RSS           int64   `json:"rss"`            // settled VmRSS
	HeapInuse     uint64  `json:"heap_inuse"`     // settled
	HeapAlloc     uint64  `json:"heap_alloc"`     // settled: the live objects, without the spans' free slots
	StackInuse    uint64  `json:"stack_inuse"`
	Goroutines    int     `json:"goroutines"`
	Ticks         int     `json:"ticks"` // during the window
	LagP50        float64 `json:"lag_p50_ms"`
	LagP99        float64 `json:"lag_p99_ms"`
	LagMax        float64 `json:"lag_max_ms"`
	StopSeconds   float64 `json:"stop_seconds"` // from the stop to every daemon returned
	ExitSeconds   float64 `json:"exit_seconds"` // from the stop to kopf.Run returning
}

func main() {
	if mode := os.Getenv("DAEMONS_BENCH_MODE"); mode != "" {
		if err := operate(mode); err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
			os.Exit(1)
		}
		return
	}
	n := flag.Int("n", 10000, "objects")
	only := flag.String("only", "", "run only these modes, comma-separated: timers, daemons (the empty operator always runs)")
	warmup := flag.Duration("warmup", 10*time.Second, "how long after ready the window starts")
	window := flag.Duration("window", 20*time.Second, "the CPU and lag window")
	profiles := flag.String("heapprofiles", "", "a directory: each operator writes its settled heap profile there (<mode>.pprof)")
	before := flag.String("before", "", "another build of this command (e.g. of an earlier commit): its timers run too, in the same run, as \"timers-before\"")
	firstStart := flag.Bool("firststart", false, "remove the finalizer from every object before each timers' run: each measures an operator's first start")
	flag.Parse()
	if err := harness(*n, *only, *warmup, *window, *profiles, *before, *firstStart); err != nil {
		fmt.Fprintln(os.Stderr, "daemons:", err)
		os.Exit(1)
	}
}

func harness(n int, only string, warmup, window time.Duration, profiles, before string, firstStart bool) error {
	ctx := context.Background()
	c, err := plane.Start(ctx, "daemons", "crd.yaml")
	if err != nil {
		return err
	}
	defer c.Stop()
	kubeconfig := c.Kubeconfig
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := createAll(ctx, dyn, n); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "daemons: %d objects created in %s\n", n, time.Since(start).Round(time.Second))

	modes := []string{"empty", "watched", "timers", "daemons"}
	if only != "" {
		modes = append([]string{"empty", "watched"}, strings.Split(only, ",")...)
	}
	if before != "" {
		modes = append(modes, "timers-before")
	}
	if slices.Contains(modes, "timers") || before != "" {
		// The objects now carry the timers' finalizer (Kopf's, added on
		// first match and kept when the operator exits): the watched
		// object as a timer's operator has it.
		modes = append(modes, "watched-final")
	}
	var reports []report
	finalized := false // a timers' run has left the finalizer on the objects
	for _, mode := range modes {
		bin := ""
		if mode == "timers-before" {
			bin = before
		}
		if timers := strings.HasPrefix(mode, "timers"); timers && firstStart && finalized {
			start := time.Now()
			if err := removeFinalizers(ctx, dyn, n); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "daemons: the finalizers removed in %s\n", time.Since(start).Round(time.Second))
		} else if timers {
			finalized = true
		}
		rep, err := runOperator(kubeconfig, mode, bin, n, warmup, window, profiles)
		rep.Mode = mode
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		fmt.Fprintf(os.Stderr, "daemons: %s: %+v\n", mode, rep)
		reports = append(reports, rep)
	}
	printMarkdown(n, warmup, window, reports)
	return nil
}

func createAll(ctx context.Context, dyn dynamic.Interface, n int) error {
	ri := dyn.Resource(gvr).Namespace("default")
	return plane.CreateMany(ctx, n, 16, func(ctx context.Context, i int) error {
		_, err := ri.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": fmt.Sprintf("obj-%05d", i)},
			"spec":     map[string]any{"field": "value"},
		}}, metav1.CreateOptions{})
		return err
	})
}

// removeFinalizers removes the finalizers of every object (the timers'
// only), so that the next operator with timers starts as for the first
// time.
func removeFinalizers(ctx context.Context, dyn dynamic.Interface, n int) error {
	ri := dyn.Resource(gvr).Namespace("default")
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	return plane.CreateMany(ctx, n, 16, func(ctx context.Context, i int) error {
		_, err := ri.Patch(ctx, fmt.Sprintf("obj-%05d", i), types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
}

func runOperator(kubeconfig, mode, bin string, n int, warmup, window time.Duration, profiles string) (report, error) {
	self, opMode := "", mode
	switch mode {
	case "timers-before":
		self, opMode = bin, "timers"
	case "watched-final":
		opMode = "watched"
	}
	env := []string{"DAEMONS_BENCH_MODE=" + opMode, "KUBECONFIG=" + kubeconfig,
		"DAEMONS_BENCH_N=" + strconv.Itoa(n), "DAEMONS_BENCH_WARMUP=" + warmup.String(), "DAEMONS_BENCH_WINDOW=" + window.String()}
	if profiles != "" {
		env = append(env, "DAEMONS_BENCH_HEAPPROFILE="+filepath.Join(profiles, mode+".pprof"))
	}
	return child.Report[report](self, env...)
}

// operate is one operator process: it serves the objects in the mode,
// measures itself, stops, and prints its report as one JSON line.
func operate(mode string) error {
	n, _ := strconv.Atoi(os.Getenv("DAEMONS_BENCH_N"))
	warmup, _ := time.ParseDuration(os.Getenv("DAEMONS_BENCH_WARMUP"))
	window, _ := time.ParseDuration(os.Getenv("DAEMONS_BENCH_WINDOW"))
	sel := kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}

	var ready atomic.Int64 // timers that have ticked, daemons that have started
	readyCh := make(chan struct{})
	markReady := func() {
		if ready.Add(1) == int64(n) {
			close(readyCh)
		}
	}
	var measuring atomic.Bool
	// The harness's own state is allocated alike in every mode, before
	// the operator starts, so that it is not counted as the timers': each
	// object's first tick (by its number, obj-NNNNN, written by its
	// timer only) and the window's lags.
	var lagMu sync.Mutex
	lags := make([]time.Duration, 0, int(float64(n)*(window.Seconds()+1)))
	firsts := make([]time.Time, n)
	clear(lags[:cap(lags)]) // touched, so resident alike in every mode
	clear(firsts)
	var bodies sync.Map     // watched: the latest body of every object
	var stopAt atomic.Int64 // unix nanos of the stop
	var stopped atomic.Int64
	var lastStop atomic.Int64

	register := func(r *kopf.Registry) error {
		switch mode {
		case "empty":
			close(readyCh)
			return r.AddEvent(kopf.EventHandler{ID: "noop", Selector: sel, Fn: func(context.Context, *kopf.EventKwargs) error { return nil }})
		case "watched":
			// The empty operator that also keeps every object's latest
			// body, as the daemons' runtime does: the baseline of "above
			// the watched object".
			close(readyCh)
			return r.AddEvent(kopf.EventHandler{ID: "keep", Selector: sel, Fn: func(_ context.Context, kw *kopf.EventKwargs) error {
				bodies.Store(kw.UID, kw.Body)
				return nil
			}})
		case "timers":
			return r.AddTimer(kopf.TimerHandler{ID: "tick", Selector: sel, Interval: time.Second, Sharp: true,
				Fn: func(ctx context.Context, kw *kopf.TimerKwargs) (any, error) {
					now := time.Now()
					i, _ := strconv.Atoi(strings.TrimPrefix(kw.Name, "obj-"))
					first := &firsts[i%n]
					if first.IsZero() {
						*first = now // the object's first tick: this timer's own grid
						markReady()
						return nil, nil
					}
					if measuring.Load() {
						lag := now.Sub(*first) % time.Second
						if lag > 500*time.Millisecond {
							lag -= time.Second // early (cannot be, but never hidden)
						}
						lagMu.Lock()
						lags = append(lags, lag)
						lagMu.Unlock()
					}
					return nil, nil
				}})
		case "daemons":
			return r.AddDaemon(kopf.DaemonHandler{ID: "idle", Selector: sel,
				Fn: func(ctx context.Context, kw *kopf.DaemonKwargs) (any, error) {
					markReady()
					<-ctx.Done()
					stopped.Add(1)
					lastStop.Store(time.Now().UnixNano())
					return nil, nil
				}})
		}
		return fmt.Errorf("unknown mode %q", mode)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	started := time.Now()
	go func() {
		done <- kopf.Run(ctx, register, kopf.WithAllNamespaces(), kopf.WithStandalone(),
			kopf.WithLogger(kopf.NewLogger(os.Stderr, kopf.LogPlain, slog.LevelError)))
	}()
	select {
	case <-readyCh:
	case err := <-done:
		return fmt.Errorf("the operator exited: %v", err)
	case <-time.After(10 * time.Minute):
		return fmt.Errorf("not ready after 10 minutes: %d of %d", ready.Load(), n)
	}
	rep := report{Mode: mode, N: n, ReadySeconds: time.Since(started).Seconds()}
	if mode == "empty" || mode == "watched" {
		// The same watch, fully listed: give it the time the others take to start.
		time.Sleep(5 * time.Second)
	}
	time.Sleep(warmup)
	measuring.Store(true)
	cpu0, t0 := cpuSeconds(), time.Now()
	time.Sleep(window)
	cpu1, t1 := cpuSeconds(), time.Now()
	measuring.Store(false)
	rep.WindowSeconds = t1.Sub(t0).Seconds()
	rep.CPUPerSecond = (cpu1 - cpu0) / rep.WindowSeconds

	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.HeapInuse, rep.HeapAlloc, rep.StackInuse = ms.HeapInuse, ms.HeapAlloc, ms.StackInuse
	rep.RSS = rss()
	rep.Goroutines = runtime.NumGoroutine()
	if path := os.Getenv("DAEMONS_BENCH_HEAPPROFILE"); path != "" {
		if err := writeHeapProfile(path); err != nil {
			return err
		}
	}

	lagMu.Lock()
	rep.Ticks = len(lags)
	rep.LagP50, rep.LagP99, rep.LagMax = quantiles(lags)
	lagMu.Unlock()

	stopAt.Store(time.Now().UnixNano())
	cancel()
	if err := <-done; err != nil {
		return err
	}
	rep.ExitSeconds = time.Since(time.Unix(0, stopAt.Load())).Seconds()
	if mode == "daemons" {
		if got := stopped.Load(); got != int64(n) {
			return fmt.Errorf("%d of %d daemons returned", got, n)
		}
		rep.StopSeconds = time.Duration(lastStop.Load() - stopAt.Load()).Seconds()
	}
	data, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	fmt.Println(string(data))
	return nil
}

// writeHeapProfile writes the heap profile (in use: see
// `go tool pprof -sample_index=inuse_space`) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func quantiles(ds []time.Duration) (p50, p99, worst float64) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) float64 {
		i := min(len(s)-1, int(math.Ceil(p*float64(len(s))))-1)
		return float64(s[max(i, 0)]) / float64(time.Millisecond)
	}
	return q(0.50), q(0.99), float64(s[len(s)-1]) / float64(time.Millisecond)
}

// cpuSeconds is this process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// rss is this process's VmRSS in bytes.
func rss() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func printMarkdown(n int, warmup, window time.Duration, reports []report) {
	byMode := map[string]report{}
	for _, r := range reports {
		byMode[r.Mode] = r
	}
	empty, watched := byMode["empty"], byMode["watched"]
	final, hasFinal := byMode["watched-final"]
	per := func(a, b int64) string { return fmt.Sprintf("%.2f KB", float64(a-b)/float64(n)/1024) }
	above := "above empty / watched"
	if hasFinal {
		above += " / watched with the finalizer"
	}
	fmt.Printf("\n| N = %d | ready (s) | CPU (s/s) | CPU vs empty | settled RSS | RSS per object %s | heap in use | heap per object %s | live heap per object %s | stacks | goroutines | ticks in window | lag p50 / p99 / max (ms) | stop of all daemons (s) | exit (s) |\n", n, above, above, above)
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
	for _, r := range reports {
		ratio := "1"
		if empty.CPUPerSecond > 0 && r.Mode != "empty" {
			ratio = fmt.Sprintf("%.1f×", r.CPUPerSecond/empty.CPUPerSecond)
		}
		rssPer, heapPer, livePer, lag, stop := "—", "—", "—", "—", "—"
		if r.Mode != "empty" {
			rssPer, heapPer, livePer = per(r.RSS, empty.RSS), per(int64(r.HeapInuse), int64(empty.HeapInuse)), per(int64(r.HeapAlloc), int64(empty.HeapAlloc))
			if r.Mode != "watched" && r.Mode != "watched-final" {
				rssPer += " / " + per(r.RSS, watched.RSS)
				heapPer += " / " + per(int64(r.HeapInuse), int64(watched.HeapInuse))
				livePer += " / " + per(int64(r.HeapAlloc), int64(watched.HeapAlloc))
				if hasFinal {
					rssPer += " / " + per(r.RSS, final.RSS)
					heapPer += " / " + per(int64(r.HeapInuse), int64(final.HeapInuse))
					livePer += " / " + per(int64(r.HeapAlloc), int64(final.HeapAlloc))
				}
			}
		}
		if strings.HasPrefix(r.Mode, "timers") {
			lag = fmt.Sprintf("%.1f / %.1f / %.1f", r.LagP50, r.LagP99, r.LagMax)
		}
		if r.Mode == "daemons" {
			stop = fmt.Sprintf("%.3f", r.StopSeconds)
		}
		fmt.Printf("| %s | %.1f | %.3f | %s | %.1f MB | %s | %.1f MB | %s | %s | %.1f MB | %d | %d | %s | %s | %.2f |\n",
			r.Mode, r.ReadySeconds, r.CPUPerSecond, ratio, float64(r.RSS)/(1<<20), rssPer, float64(r.HeapInuse)/(1<<20), heapPer, livePer, float64(r.StackInuse)/(1<<20), r.Goroutines, r.Ticks, lag, stop, r.ExitSeconds)
	}
	fmt.Printf("\n(warm-up %s after ready, window %s; GOMAXPROCS %d)\n", warmup, window, runtime.GOMAXPROCS(0))
}
