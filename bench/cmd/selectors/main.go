// Command selectors is issue 27's benchmark of the server-side selectors
// inferred from the handlers' filters: a resource of N objects (100,000
// by default), 1% of them labelled app=x, and an operator whose only
// handler (on.event, labels={app: x}) counts the labelled objects, run
// twice on the same objects: with the inferred label selector (the
// default), and with the inference off (settings.Watching.InferSelectors
// = false: every object listed, watched, decoded and filtered here, as
// Kopf does). The ratios are of the same run.
//
//	cd bench && go run ./cmd/selectors -n 100000     # ~4 minutes on 2 cores
//
// It is independent of `make bench` and of cmd/bench: one control plane
// (e2e/cluster, binaries from bin/k8s or $KUBEBUILDER_ASSETS), N objects
// created once, then one operator process per mode (this same binary,
// re-executed with SELECTORS_BENCH_MODE set), in turn. Each operator
// measures itself, so that nothing of the harness is counted: the time
// until it is ready (every watch listed) and has seen every labelled
// object, the events its watches received (kopf_watch_events_total, from
// its own /metrics: each is one object decoded), the bytes of its list
// and watch responses (a transport wrapper), its CPU time until then and
// over an idle window after, and its peak (VmHWM) and settled RSS. The
// harness prints a Markdown table for bench/RESULTS.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/bench/internal/child"
	"github.com/kopf-go/kopf/bench/internal/plane"
	"github.com/kopf-go/kopf/runtime/operator"
)

var gvr = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// report is what one operator process measures of itself.
type report struct {
	Mode          string  `json:"mode"`
	N             int     `json:"n"`
	Labelled      int     `json:"labelled"`
	ReadySeconds  float64 `json:"ready_seconds"` // from start to ready with every labelled object seen
	Events        float64 `json:"events"`        // kopf_watch_events_total
	Bytes         int64   `json:"bytes"`         // of the list and watch responses
	CPUReady      float64 `json:"cpu_ready"`     // CPU seconds until ready
	CPUIdle       float64 `json:"cpu_idle"`      // CPU seconds per second over the idle window
	PeakRSS       int64   `json:"peak_rss"`      // VmHWM
	SettledRSS    int64   `json:"settled_rss"`   // VmRSS after GC and FreeOSMemory
	HeapInuse     uint64  `json:"heap_inuse"`
	WindowSeconds float64 `json:"window_seconds"`
}

func main() {
	if mode := os.Getenv("SELECTORS_BENCH_MODE"); mode != "" {
		if err := operate(mode); err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
			os.Exit(1)
		}
		return
	}
	n := flag.Int("n", 100000, "objects (1% labelled)")
	window := flag.Duration("window", 10*time.Second, "the idle CPU window after ready")
	creators := flag.Int("creators", 48, "concurrent creators of the objects")
	flag.Parse()
	if err := harness(*n, *creators, *window); err != nil {
		fmt.Fprintln(os.Stderr, "selectors:", err)
		os.Exit(1)
	}
}

func harness(n, creators int, window time.Duration) error {
	ctx := context.Background()
	c, err := plane.Start(ctx, "selectors", "crd.yaml")
	if err != nil {
		return err
	}
	defer c.Stop()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	start := time.Now()
	ri := dyn.Resource(gvr).Namespace("default")
	err = plane.CreateMany(ctx, n, creators, func(ctx context.Context, i int) error {
		meta := map[string]any{"name": fmt.Sprintf("obj-%06d", i)}
		if i%100 == 0 {
			meta["labels"] = map[string]any{"app": "x"}
		}
		_, err := ri.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": meta,
			"spec": map[string]any{"field": "value", "items": []any{"a", "b", "c"}},
		}}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "selectors: %d objects created in %s\n", n, time.Since(start).Round(time.Second))
	var reports []report
	for _, mode := range []string{"inferred", "client-side"} {
		rep, err := runOperator(c.Kubeconfig, mode, n, window)
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		fmt.Fprintf(os.Stderr, "selectors: %s: %+v\n", mode, rep)
		reports = append(reports, rep)
	}
	printMarkdown(n, window, reports)
	return nil
}

func runOperator(kubeconfig, mode string, n int, window time.Duration) (report, error) {
	return child.Report[report]("", "SELECTORS_BENCH_MODE="+mode, "KUBECONFIG="+kubeconfig,
		"SELECTORS_BENCH_N="+strconv.Itoa(n), "SELECTORS_BENCH_WINDOW="+window.String())
}

// counter counts the bytes of the list and watch responses of the
// resource.
type counter struct{ n atomic.Int64 }

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	k, err := b.ReadCloser.Read(p)
	b.n.Add(int64(k))
	return k, err
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (c *counter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/kopfexamples") {
			resp.Body = countingBody{ReadCloser: resp.Body, n: &c.n}
		}
		return resp, err
	})
}

// operate is one operator process: it serves the objects in the mode,
// measures itself, stops, and prints its report as one JSON line.
func operate(mode string) error {
	n, _ := strconv.Atoi(os.Getenv("SELECTORS_BENCH_N"))
	window, _ := time.ParseDuration(os.Getenv("SELECTORS_BENCH_WINDOW"))
	labelled := (n + 99) / 100
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	var bytes counter
	cfg.Wrap(bytes.wrap)
	metricsAddr, err := freeAddress()
	if err != nil {
		return err
	}

	var seen sync.Map
	var count atomic.Int64
	allSeen, listed := make(chan struct{}), make(chan struct{})
	var listedOnce sync.Once
	register := func(r *kopf.Registry) error {
		return r.AddEvent(kopf.EventHandler{ID: "count", Selector: kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
			Filter: kopf.Filter{Labels: map[string]kopf.Matcher{"app": kopf.Equal("x")}},
			Fn: func(_ context.Context, kw *kopf.EventKwargs) error {
				if _, dup := seen.LoadOrStore(kw.UID, true); !dup && count.Add(1) == int64(labelled) {
					close(allSeen)
				}
				return nil
			}})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	started := time.Now()
	go func() {
		done <- kopf.Run(ctx, register, kopf.WithAllNamespaces(), kopf.WithStandalone(), kopf.WithConfig(cfg),
			kopf.WithMetrics(metricsAddr), kopf.WithPlainMetrics(),
			kopf.WithSettings(func(s *kopf.Settings) { s.Watching.InferSelectors = mode == "inferred" }),
			func(o *operator.Options) { o.Ready = func() { listedOnce.Do(func() { close(listed) }) } },
			kopf.WithLogger(kopf.NewLogger(os.Stderr, kopf.LogPlain, slog.LevelInfo)))
	}()
	for _, ch := range []chan struct{}{listed, allSeen} {
		select {
		case <-ch:
		case err := <-done:
			return fmt.Errorf("the operator exited: %v", err)
		case <-time.After(10 * time.Minute):
			return fmt.Errorf("not ready after 10 minutes: %d of %d labelled objects seen", count.Load(), labelled)
		}
	}
	rep := report{Mode: mode, N: n, Labelled: labelled, ReadySeconds: time.Since(started).Seconds(), CPUReady: cpuSeconds()}
	cpu0, t0 := cpuSeconds(), time.Now()
	time.Sleep(window)
	rep.WindowSeconds = time.Since(t0).Seconds()
	rep.CPUIdle = (cpuSeconds() - cpu0) / rep.WindowSeconds
	if rep.Events, err = watchEvents(metricsAddr); err != nil {
		return err
	}
	rep.Bytes = bytes.n.Load()
	rep.PeakRSS = procStatus("VmHWM:")
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.HeapInuse, rep.SettledRSS = ms.HeapInuse, procStatus("VmRSS:")
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

// freeAddress is a loopback address with a port free now.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// watchEvents sums kopf_watch_events_total of the operator's own /metrics.
func watchEvents(addr string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "kopf_watch_events_total{") {
			fields := strings.Fields(line)
			v, _ := strconv.ParseFloat(fields[len(fields)-1], 64)
			sum += v
		}
	}
	return sum, sc.Err()
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

// procStatus is a line of /proc/self/status in bytes (VmRSS:, VmHWM:).
func procStatus(key string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func printMarkdown(n int, window time.Duration, reports []report) {
	var base report // the client-side filter
	for _, r := range reports {
		if r.Mode == "client-side" {
			base = r
		}
	}
	ratio := func(a, b float64) string {
		if b == 0 {
			return "—"
		}
		return fmt.Sprintf("%.3g×", a/b)
	}
	mb := func(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }
	fmt.Printf("\n| N = %d, %d labelled | ready (s) | watch events (= objects decoded) | bytes of list+watch | CPU until ready (s) | idle CPU (s/s) | peak RSS | settled RSS | heap in use |\n", n, base.Labelled)
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range reports {
		fmt.Printf("| %s | %.1f | %.0f | %s | %.2f | %.4f | %s | %s | %s |\n", r.Mode, r.ReadySeconds, r.Events, mb(r.Bytes),
			r.CPUReady, r.CPUIdle, mb(r.PeakRSS), mb(r.SettledRSS), mb(int64(r.HeapInuse)))
	}
	for _, r := range reports {
		if r.Mode == "inferred" {
			fmt.Printf("| inferred / client-side | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				ratio(r.ReadySeconds, base.ReadySeconds), ratio(r.Events, base.Events), ratio(float64(r.Bytes), float64(base.Bytes)),
				ratio(r.CPUReady, base.CPUReady), ratio(r.CPUIdle, base.CPUIdle), ratio(float64(r.PeakRSS), float64(base.PeakRSS)),
				ratio(float64(r.SettledRSS), float64(base.SettledRSS)), ratio(float64(r.HeapInuse), float64(base.HeapInuse)))
		}
	}
	fmt.Printf("\n(idle window %s after ready; GOMAXPROCS %d)\n", window, runtime.GOMAXPROCS(0))
}
