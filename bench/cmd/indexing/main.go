// Command indexing is issue #14's benchmark of indices: N pods (10,000 by
// default) indexed as Kopf's examples/16-indexing indexes them (is_running:
// one value per pod under its namespace and name, typed; by_label: the
// pod's name under each of its labels, here app=bench, shared by all the
// pods, and pod=<name>, one per pod), and one KopfExample whose event
// handler marks the moment handlers run: after every pod is indexed.
//
//	cd bench && go run ./cmd/indexing -n 10000        # ~3 minutes on 2 cores
//
// One control plane (e2e/cluster, binaries from bin/k8s or
// $KUBEBUILDER_ASSETS), the objects created once, then one operator
// process per mode (this binary, re-executed with INDEXING_BENCH_MODE
// set), in turn:
//
//   - watched: the same watches, with an index function that returns
//     nothing (the baseline of memory: the pods are watched and their
//     functions called, nothing is kept);
//   - indexed: the two indices;
//   - indexed-w1: the two indices with settings.Queueing.WorkerLimit 1 and
//     an event handler on every pod as well (Kopf deadlocks there, #1243):
//     ready once every pod's handler has run.
//
// Each operator measures itself: the time from kopf.Run to its handlers
// running (the KopfExample's handler, which sees the full indices, and in
// indexed-w1 every pod's), then, after a settling pause, its memory
// (after runtime.GC and debug.FreeOSMemory: VmRSS and the Go heap in use).
// Memory per index entry is the heap above the watched mode divided by the
// number of entries (one value of one pod under one key: 3 per pod). The
// harness prints a Markdown table for bench/RESULTS.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/bench/internal/child"
	"github.com/kopf-go/kopf/bench/internal/plane"
)

var kopfexamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// report is what one operator process measures of itself.
type report struct {
	Mode         string  `json:"mode"`
	N            int     `json:"n"`
	ReadySeconds float64 `json:"ready_seconds"` // from kopf.Run to the handlers run
	AllSeconds   float64 `json:"all_seconds"`   // indexed-w1: to every pod's handler run
	Entries      int     `json:"entries"`       // values in the indices when the handler ran
	RSS          int64   `json:"rss"`           // settled VmRSS
	HeapInuse    uint64  `json:"heap_inuse"`    // settled
	Goroutines   int     `json:"goroutines"`
}

func main() {
	if mode := os.Getenv("INDEXING_BENCH_MODE"); mode != "" {
		if err := operate(mode); err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
			os.Exit(1)
		}
		return
	}
	n := flag.Int("n", 10000, "pods")
	flag.Parse()
	if err := harness(*n); err != nil {
		fmt.Fprintln(os.Stderr, "indexing:", err)
		os.Exit(1)
	}
}

func harness(n int) error {
	ctx := context.Background()
	c, err := plane.Start(ctx, "indexing", "crd.yaml", "obj.yaml")
	if err != nil {
		return err
	}
	defer c.Stop()
	kubeconfig := c.Kubeconfig
	start := time.Now()
	if err := createPods(ctx, c.Config, n); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "indexing: %d pods created in %s\n", n, time.Since(start).Round(time.Second))
	// The example object exists before the operators start.
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	if _, err := dyn.Resource(kopfexamples).Namespace("default").Get(ctx, "kopf-example-1", metav1.GetOptions{}); err != nil {
		return err
	}

	var reports []report
	for _, mode := range []string{"watched", "indexed", "indexed-w1"} {
		rep, err := runOperator(kubeconfig, mode, n)
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		fmt.Fprintf(os.Stderr, "indexing: %s: %+v\n", mode, rep)
		reports = append(reports, rep)
	}
	printMarkdown(n, reports)
	return nil
}

func createPods(ctx context.Context, cfg *rest.Config, n int) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return plane.CreateMany(ctx, n, 16, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("pod-%05d", i)
		_, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench", "pod": name}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}, metav1.CreateOptions{})
		return err
	})
}

func runOperator(kubeconfig, mode string, n int) (report, error) {
	return child.Report[report]("", "INDEXING_BENCH_MODE="+mode, "KUBECONFIG="+kubeconfig, "INDEXING_BENCH_N="+strconv.Itoa(n))
}

// operate is one operator process: it serves the objects in the mode,
// measures itself, stops, and prints its report as one JSON line.
func operate(mode string) error {
	n, _ := strconv.Atoi(os.Getenv("INDEXING_BENCH_N"))
	pods := kopf.Selector{Version: "v1", Name: "pods", Core: true}
	kex := kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}

	isRunning := kopf.NewIndex[[2]string, bool]()
	byLabel := kopf.NewIndex[[2]string, string]()
	nothing := kopf.NewIndex[string, string]()
	entries := func() int {
		total := 0
		for _, s := range isRunning.All() {
			total += s.Len()
		}
		for _, s := range byLabel.All() {
			total += s.Len()
		}
		return total
	}

	started := time.Now()
	var handlersRan atomic.Int64 // unix nanos of the KopfExample's handler's first call
	var indexedThen atomic.Int64 // entries at that moment
	var podCalls atomic.Int64
	allPods := make(chan struct{})
	ready := make(chan struct{})
	register := func(r *kopf.Registry) error {
		if mode == "watched" {
			if err := r.AddIndex(kopf.IndexHandler{ID: "nothing", Selector: pods,
				Fn: kopf.IndexFunc(nothing, func(context.Context, kopf.IndexKwargs) (map[string]string, error) { return nil, nil })}); err != nil {
				return err
			}
		} else {
			if err := r.AddIndex(kopf.IndexHandler{ID: "is_running", Selector: pods,
				Fn: kopf.TypedIndexFunc(isRunning, func(_ context.Context, kw kopf.TypedIndexKwargs[corev1.Pod]) (map[[2]string]bool, error) {
					return map[[2]string]bool{{kw.Namespace, kw.Name}: kw.Object.Status.Phase == corev1.PodRunning}, nil
				})}); err != nil {
				return err
			}
			if err := r.AddIndex(kopf.IndexHandler{ID: "by_label", Selector: pods,
				Fn: kopf.IndexFunc(byLabel, func(_ context.Context, kw kopf.IndexKwargs) (map[[2]string]string, error) {
					out := make(map[[2]string]string, len(kw.Labels))
					for k, v := range kw.Labels {
						out[[2]string{k, v}] = kw.Name
					}
					return out, nil
				})}); err != nil {
				return err
			}
		}
		if mode == "indexed-w1" {
			if err := r.AddEvent(kopf.EventHandler{ID: "pods", Selector: pods, Fn: func(context.Context, *kopf.EventKwargs) error {
				if podCalls.Add(1) == int64(n) {
					close(allPods)
				}
				return nil
			}}); err != nil {
				return err
			}
		} else {
			close(allPods)
		}
		return r.AddEvent(kopf.EventHandler{ID: "kex", Selector: kex, Fn: func(context.Context, *kopf.EventKwargs) error {
			if handlersRan.CompareAndSwap(0, time.Now().UnixNano()) {
				indexedThen.Store(int64(entries()))
				close(ready)
			}
			return nil
		}})
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- kopf.Run(ctx, register, kopf.WithAllNamespaces(), kopf.WithStandalone(),
			kopf.WithLogger(kopf.NewLogger(os.Stderr, kopf.LogPlain, slog.LevelError)),
			kopf.WithSettings(func(s *kopf.Settings) {
				if mode == "indexed-w1" {
					s.Queueing.WorkerLimit = 1
				}
			}))
	}()
	for _, ch := range []chan struct{}{ready, allPods} {
		select {
		case <-ch:
		case err := <-done:
			return fmt.Errorf("the operator exited: %v", err)
		case <-time.After(10 * time.Minute):
			return fmt.Errorf("not ready after 10 minutes: %d pods' handlers ran", podCalls.Load())
		}
	}
	rep := report{Mode: mode, N: n, Entries: int(indexedThen.Load()),
		ReadySeconds: time.Duration(handlersRan.Load() - started.UnixNano()).Seconds(),
		AllSeconds:   time.Since(started).Seconds()}
	if mode != "watched" && rep.Entries != 3*n {
		return fmt.Errorf("the handler saw %d index entries, want %d", rep.Entries, 3*n)
	}
	time.Sleep(5 * time.Second) // the workers exit when idle
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.HeapInuse = ms.HeapInuse
	rep.RSS = rss()
	rep.Goroutines = runtime.NumGoroutine()
	cancel()
	if err := <-done; err != nil {
		return err
	}
	data, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	fmt.Println(string(data))
	return nil
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

func printMarkdown(n int, reports []report) {
	var watched report
	for _, r := range reports {
		if r.Mode == "watched" {
			watched = r
		}
	}
	fmt.Printf("\n| N = %d pods | handlers run after (s) | every pod's handler run after (s) | index entries seen by the first handler | settled RSS | heap in use | heap per entry above watched | RSS per entry above watched | goroutines |\n", n)
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range reports {
		all, perHeap, perRSS := "—", "—", "—"
		if r.Mode == "indexed-w1" {
			all = fmt.Sprintf("%.2f", r.AllSeconds)
		}
		if r.Mode != "watched" && r.Entries > 0 {
			perHeap = fmt.Sprintf("%.0f B", float64(int64(r.HeapInuse)-int64(watched.HeapInuse))/float64(r.Entries))
			perRSS = fmt.Sprintf("%.0f B", float64(r.RSS-watched.RSS)/float64(r.Entries))
		}
		fmt.Printf("| %s | %.2f | %s | %d | %.1f MB | %.1f MB | %s | %s | %d |\n",
			r.Mode, r.ReadySeconds, all, r.Entries, float64(r.RSS)/(1<<20), float64(r.HeapInuse)/(1<<20), perHeap, perRSS, r.Goroutines)
	}
	fmt.Printf("\n(GOMAXPROCS %d)\n", runtime.GOMAXPROCS(0))
}
