// Command fleet is issue 29's benchmark of a fleet operator's cost per
// cluster: the memory (heap in use, settled RSS) and the goroutines of an
// idle engaged member cluster, with one watched resource (kopfexamples,
// a create handler) and no objects, against the single-cluster operator
// of the same handlers in the same run.
//
//	cd bench && go run ./cmd/fleet -k 1,10,50     # ~1 minute on 2 cores
//
// It is independent of `make bench` and of cmd/bench: one control plane
// (e2e/cluster, binaries from bin/k8s or $KUBEBUILDER_ASSETS), then one
// operator process per mode (this same binary, re-executed with
// FLEET_BENCH_K set), in turn: K = 0 is the single-cluster operator
// (kopf.Run without Options.Clusters); K > 0 a fleet operator whose
// provider engages K clusters, all named differently and all the same
// API server (what is measured is the operator's side: each member has
// its own clients, connection, watch, workers, daemons engine, poster and
// metrics, as with K API servers). Each process waits until its readiness
// endpoint says that every cluster is ready (its watch has listed), runs
// the GC and returns the memory to the OS, and reports its goroutines,
// heap in use and RSS. The harness prints a Markdown table for
// bench/RESULTS.md: the figures, their ratio to the single-cluster
// operator, and the cost per member ((fleet K − single) / K).
package main

import (
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
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/bench/internal/child"
	"github.com/kopf-go/kopf/bench/internal/plane"
	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/operator"
)

// report is what one operator process measures of itself.
type report struct {
	K          int     `json:"k"` // 0: the single-cluster operator
	Goroutines int     `json:"goroutines"`
	HeapInuse  uint64  `json:"heap_inuse"`
	SettledRSS int64   `json:"settled_rss"` // VmRSS after GC and FreeOSMemory
	ReadyAfter float64 `json:"ready_after"` // seconds from start to every cluster ready
}

func main() {
	if k := os.Getenv("FLEET_BENCH_K"); k != "" {
		n, _ := strconv.Atoi(k)
		if err := operate(n); err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
			os.Exit(1)
		}
		return
	}
	ks := flag.String("k", "1,10,50", "the fleets' sizes, comma-separated (the single-cluster operator is always run first)")
	settle := flag.Duration("settle", 3*time.Second, "how long an operator idles once ready, before it is measured")
	flag.Parse()
	if err := harness(*ks, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func harness(ks string, settle time.Duration) error {
	c, err := plane.Start(context.Background(), "fleet", "crd.yaml")
	if err != nil {
		return err
	}
	defer c.Stop()
	sizes := []int{0}
	for _, s := range strings.Split(ks, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			return fmt.Errorf("a bad fleet size %q", s)
		}
		sizes = append(sizes, k)
	}
	var reports []report
	for _, k := range sizes {
		rep, err := runOperator(c.Kubeconfig, k, settle)
		if err != nil {
			return fmt.Errorf("K=%d: %w", k, err)
		}
		fmt.Fprintf(os.Stderr, "fleet: %+v\n", rep)
		reports = append(reports, rep)
	}
	printMarkdown(reports, settle)
	return nil
}

func runOperator(kubeconfig string, k int, settle time.Duration) (report, error) {
	return child.Report[report]("", "FLEET_BENCH_K="+strconv.Itoa(k), "KUBECONFIG="+kubeconfig, "FLEET_BENCH_SETTLE="+settle.String())
}

// members is the provider of a fleet of k clusters, all cfg's API server.
type members struct {
	k   int
	cfg *rest.Config
}

func (p members) Run(ctx context.Context, sink clusters.Sink) error {
	for i := range p.k {
		if err := sink.Engage(ctx, clusters.Cluster{Name: fmt.Sprintf("member-%03d", i), Config: rest.CopyConfig(p.cfg)}); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

// operate is one operator process: it serves k clusters (0: the single
// cluster), measures itself once they are all ready and it has idled,
// stops, and prints its report as one JSON line.
func operate(k int) error {
	settle, _ := time.ParseDuration(os.Getenv("FLEET_BENCH_SETTLE"))
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	addr, err := freeAddress()
	if err != nil {
		return err
	}
	register := func(r *kopf.Registry) error {
		return r.AddChanging(kopf.ChangingHandler{ID: "create_fn", Selector: kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
			Reasons: []kopf.Reason{kopf.ReasonCreate}, Fn: func(context.Context, *kopf.ChangingKwargs) (any, error) { return nil, nil }})
	}
	opts := []kopf.Option{kopf.WithAllNamespaces(), kopf.WithStandalone(), kopf.WithConfig(cfg),
		kopf.WithReadiness("http://" + addr + "/readyz"),
		kopf.WithLogger(kopf.NewLogger(io.Discard, kopf.LogPlain, slog.LevelWarn))}
	if k > 0 {
		opts = append(opts, func(o *operator.Options) { o.Clusters = members{k: k, cfg: cfg} })
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	started := time.Now()
	go func() { done <- kopf.Run(ctx, register, opts...) }()
	if err := awaitReady(addr, k, done); err != nil {
		return err
	}
	rep := report{K: k, ReadyAfter: time.Since(started).Seconds()}
	time.Sleep(settle) // idle: the measurement is of an idle operator
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.Goroutines, rep.HeapInuse, rep.SettledRSS = runtime.NumGoroutine(), ms.HeapInuse, procStatus("VmRSS:")
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

// awaitReady polls the readiness endpoint until the operator is ready and,
// in a fleet, lists k clusters, all ready.
func awaitReady(addr string, k int, done <-chan error) error {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			return fmt.Errorf("the operator exited: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			continue
		}
		var body struct {
			Ready    bool `json:"ready"`
			Clusters []struct {
				Ready bool `json:"ready"`
			} `json:"clusters"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || !body.Ready || len(body.Clusters) != k {
			continue
		}
		ready := 0
		for _, c := range body.Clusters {
			if c.Ready {
				ready++
			}
		}
		if ready == k {
			return nil
		}
	}
	return fmt.Errorf("not ready in 5 minutes")
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

func printMarkdown(reports []report, settle time.Duration) {
	single := reports[0]
	mb := func(b float64) string { return fmt.Sprintf("%.1f MB", b/(1<<20)) }
	fmt.Println("\n| operator | clusters ready after (s) | goroutines | heap in use | settled RSS | ratio to single (goroutines / heap / RSS) | per member (goroutines / heap / RSS) |")
	fmt.Println("|---|---:|---:|---:|---:|---|---|")
	for _, r := range reports {
		name, per := "single cluster", "—"
		if r.K > 0 {
			name = fmt.Sprintf("fleet of %d", r.K)
			k := float64(r.K)
			per = fmt.Sprintf("%.1f / %s / %s", float64(r.Goroutines-single.Goroutines)/k,
				mb((float64(r.HeapInuse)-float64(single.HeapInuse))/k), mb((float64(r.SettledRSS)-float64(single.SettledRSS))/k))
		}
		fmt.Printf("| %s | %.1f | %d | %s | %s | %.2f× / %.2f× / %.2f× | %s |\n", name, r.ReadyAfter, r.Goroutines, mb(float64(r.HeapInuse)), mb(float64(r.SettledRSS)),
			float64(r.Goroutines)/float64(single.Goroutines), float64(r.HeapInuse)/float64(single.HeapInuse), float64(r.SettledRSS)/float64(single.SettledRSS), per)
	}
	fmt.Printf("\n(idle %s after ready; GOMAXPROCS %d)\n", settle, runtime.GOMAXPROCS(0))
}
