// Command sharding is issue 16's scale benchmark, independent of `make
// bench` and of cmd/bench:
//
//   - throughput of 1, 2 and 3 sharded replicas (--shards, separate
//     processes) on N pre-created objects, each object's creation handler
//     costing either CPU (a busy loop of -cpu, 2 ms, with GOMAXPROCS=1 per
//     replica: one core each, as a pod with a CPU limit of 1) or waiting
//     (a sleep of -sleep, 20 ms, with settings.Queueing.WorkerLimit
//     -workers, 1): the ratios against one replica, in the same run;
//   - one replica (no sharding) catching up with -big objects (100,000):
//     catch-up time, memory per object (settled RSS and Go heap against the
//     same operator with no objects, measured in the same run), idle CPU.
//
// Run it so:
//
//	cd bench && go run ./cmd/sharding                    # both parts
//	cd bench && go run ./cmd/sharding -big 0              # throughput only
//	cd bench && go run ./cmd/sharding -n 0 -big 30000     # scale only
//	cd bench && go run ./cmd/sharding -n 0 -big 0 -scale 100000 -replicas 1,2,4
//
// The last is issue 27's sharded scale runs (scale.go): what each of 1, 2
// and 4 sharded replicas receives, decodes and costs on -scale objects,
// per --shard-mode (-modes).
//
// One control plane (e2e/cluster: binaries from bin/k8s or
// $KUBEBUILDER_ASSETS) and the KopfExample CRD of examples/ (status a
// subresource: two writes per handled object, three under sharding with
// the owner's stamp). The operators are this binary re-executed with
// SHARDING_BENCH_MODE=operator; each counts its handler's runs and
// reports them, its CPU time and its settled memory on request (SIGUSR2:
// counts; SIGUSR1: runtime.GC + debug.FreeOSMemory, then memory), as one
// JSON line on stdout. The harness prints Markdown for bench/RESULTS.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/bench/internal/plane"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// shards is the number of buckets of every sharded run (--shards).
const shards = 64

var gvr = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// report is what an operator process says of itself.
type report struct {
	Handled   int64   `json:"handled"`
	First     int64   `json:"first"` // unix ns of the first and last handler's end
	Last      int64   `json:"last"`
	CPU       float64 `json:"cpu"` // seconds, user + system
	RSS       int64   `json:"rss"` // bytes, settled (SIGUSR1 only)
	HeapInuse int64   `json:"heapInuse"`
	// Times are the ends of every handler run (unix ns), with
	// SHARDING_BENCH_TIMES set.
	Times []int64 `json:"times,omitempty"`
	// Of the scale runs (SHARDING_BENCH_COST=events): the distinct
	// objects handled, when the last of them was first handled (unix ns),
	// the handler's calls, and the objects received in lists and watches.
	Distinct int64 `json:"distinct,omitempty"`
	LastNew  int64 `json:"lastNew,omitempty"`
	Received int64 `json:"received,omitempty"`
	Listed   int64 `json:"listed,omitempty"`
	Watched  int64 `json:"watched,omitempty"`
}

func main() {
	if os.Getenv("SHARDING_BENCH_MODE") == "operator" {
		if err := operate(); err != nil {
			fmt.Fprintln(os.Stderr, "sharding operator:", err)
			os.Exit(1)
		}
		return
	}
	n := flag.Int("n", 2000, "objects of the throughput runs (0: skip them)")
	big := flag.Int("big", 100000, "objects of the one-replica scale run (0: skip it)")
	cpu := flag.Duration("cpu", 2*time.Millisecond, "CPU burnt by the handler per object in the CPU runs")
	sleep := flag.Duration("sleep", 20*time.Millisecond, "time slept by the handler per object in the waiting runs")
	workers := flag.Int("workers", 1, "settings.Queueing.WorkerLimit of the waiting runs")
	creators := flag.Int("creators", 32, "concurrent creators of the objects")
	scale := flag.Int("scale", 0, "objects of the sharded scale runs (issue 27; 0: skip them)")
	replicas := flag.String("replicas", "1,2,4", "numbers of replicas of the scale runs")
	modes := flag.String("modes", "filter", "--shard-mode of the scale runs, comma-separated")
	settle := flag.Duration("settle", 5*time.Second, "how long the scale runs' counts stay unchanged once caught up")
	flag.Parse()
	var reps []int
	for _, f := range strings.Split(*replicas, ",") {
		r, err := strconv.Atoi(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sharding: -replicas:", err)
			os.Exit(2)
		}
		reps = append(reps, r)
	}
	sc := scaleFlags{n: *scale, replicas: reps, modes: strings.Split(*modes, ","), settle: *settle}
	if err := harness(*n, *big, *cpu, *sleep, *workers, *creators, sc); err != nil {
		fmt.Fprintln(os.Stderr, "sharding:", err)
		os.Exit(1)
	}
}

// scaleFlags are the scale runs' (scale.go).
type scaleFlags struct {
	n        int
	replicas []int
	modes    []string
	settle   time.Duration
}

func harness(n, big int, cpu, sleep time.Duration, workers, creators int, sc scaleFlags) error {
	ctx := context.Background()
	c, err := plane.Start(ctx, "sharding", "crd.yaml")
	if err != nil {
		return err
	}
	defer c.Stop()
	work, kubeconfig := c.Work, c.Kubeconfig
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = -1, 0
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	logf("control plane up; work directory %s", work)
	if sc.n > 0 {
		rows, err := runScale(ctx, dyn, cfg, kubeconfig, work, sc.n, creators, sc.modes, sc.replicas, sc.settle)
		printScale(sc.n, rows)
		if err != nil {
			return err
		}
	}

	if n > 0 {
		type row struct {
			cost     string
			replicas int
			rate     float64
			wall     float64
			handled  int64
			cpu      float64
		}
		var rows []row
		for _, cost := range []string{"cpu", "sleep"} {
			for replicas := 1; replicas <= 3; replicas++ {
				ns := fmt.Sprintf("%s-%d", cost, replicas)
				if err := createAll(ctx, dyn, ns, n, creators); err != nil {
					return err
				}
				env := []string{"SHARDING_BENCH_TIMES=1", "SHARDING_BENCH_COST=" + cost, "SHARDING_BENCH_CPU=" + cpu.String(), "SHARDING_BENCH_SLEEP=" + sleep.String(), "SHARDING_BENCH_GROUP=" + ns}
				if cost == "cpu" {
					env = append(env, "GOMAXPROCS=1")
				} else {
					env = append(env, "SHARDING_BENCH_WORKERS="+strconv.Itoa(workers))
				}
				var ops []*operatorProc
				for i := range replicas {
					op, err := startOperator(kubeconfig, work, fmt.Sprintf("%s-r%d", ns, i), ns, true, env)
					if err != nil {
						return err
					}
					ops = append(ops, op)
				}
				start := time.Now()
				reps, err := awaitHandled(ops, int64(n), 10*time.Minute)
				wall := time.Since(start)
				var total int64
				var cpuSum float64
				var shares []int64
				for _, r := range reps {
					total += r.Handled
					cpuSum += r.CPU
					shares = append(shares, r.Handled)
				}
				for _, op := range ops {
					op.stop()
				}
				if err != nil {
					return fmt.Errorf("%s with %d replicas: %w", cost, replicas, err)
				}
				// Throughput between the 10th and the 90th percentile of
				// the handlers' ends: the replicas' start and their
				// first claims (one replica may claim every bucket before
				// it sees the others, and hand them over a second later)
				// are not counted, nor the stragglers.
				var times []int64
				for _, r := range reps {
					times = append(times, r.Times...)
				}
				slices.Sort(times)
				lo, hi := times[len(times)/10], times[len(times)*9/10]
				rate := float64(len(times)*8/10) / (float64(hi-lo) / 1e9)
				rows = append(rows, row{cost, replicas, rate, wall.Seconds(), total, cpuSum})
				logf("%s, %d replicas: %d handled (per replica: %v), %.1f objects/s (wall %.1f s)", cost, replicas, total, shares, rate, wall.Seconds())
				if err := deleteAll(ctx, dyn, ns); err != nil {
					return err
				}
			}
		}
		fmt.Printf("\n| handler | replicas | objects/s | vs 1 replica | handler runs | wall from start (s) | CPU of the replicas (s) |\n|---|---|---|---|---|---|---|\n")
		base := map[string]float64{}
		for _, r := range rows {
			if r.replicas == 1 {
				base[r.cost] = r.rate
			}
			title := fmt.Sprintf("CPU %s (GOMAXPROCS=1)", cpu)
			if r.cost == "sleep" {
				title = fmt.Sprintf("sleep %s (WorkerLimit=%d)", sleep, workers)
			}
			fmt.Printf("| %s | %d | %.1f | %.2f× | %d of %d | %.1f | %.1f |\n", title, r.replicas, r.rate, r.rate/base[r.cost], r.handled, n, r.wall, r.cpu)
		}
	}

	if big > 0 {
		// The baseline: the same operator with no objects.
		empty, err := startOperator(kubeconfig, work, "empty", "nothing-here", false, []string{"SHARDING_BENCH_COST=none"})
		if err != nil {
			return err
		}
		time.Sleep(5 * time.Second) // let it list and settle: nothing to wait for
		base, err := empty.ask(syscall.SIGUSR1)
		empty.stop()
		if err != nil {
			return err
		}
		start := time.Now()
		if err := createAll(ctx, dyn, "big", big, creators); err != nil {
			return err
		}
		created := time.Since(start)
		logf("%d objects created in %s", big, created.Round(time.Second))
		op, err := startOperator(kubeconfig, work, "big", "big", false, []string{"SHARDING_BENCH_COST=none"})
		if err != nil {
			return err
		}
		started := time.Now()
		reps, err := awaitHandled([]*operatorProc{op}, int64(big), 30*time.Minute)
		if err != nil {
			op.stop()
			return err
		}
		catchUp := time.Since(started)
		time.Sleep(5 * time.Second) // the last patches' events come back
		before, err := op.ask(syscall.SIGUSR2)
		if err != nil {
			return err
		}
		idleWindow := 10 * time.Second
		time.Sleep(idleWindow)
		after, err := op.ask(syscall.SIGUSR1)
		op.stop()
		if err != nil {
			return err
		}
		idle := (after.CPU - before.CPU) / idleWindow.Seconds()
		fmt.Printf("\n| N | created in (s) | catch-up (s) | objects/s | handler runs | settled RSS | RSS per object above empty | Go heap in use | heap per object above empty | idle CPU (cores) | CPU of the catch-up (s) |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		fmt.Printf("| %d | %.0f | %.1f | %.0f | %d | %.1f MB | %.2f KB | %.1f MB | %.2f KB | %.4f | %.1f |\n",
			big, created.Seconds(), catchUp.Seconds(), float64(big)/catchUp.Seconds(), reps[0].Handled,
			float64(after.RSS)/1e6, float64(after.RSS-base.RSS)/float64(big)/1024,
			float64(after.HeapInuse)/1e6, float64(after.HeapInuse-base.HeapInuse)/float64(big)/1024,
			idle, before.CPU)
		fmt.Printf("\nEmpty operator: settled RSS %.1f MB, heap in use %.1f MB.\n", float64(base.RSS)/1e6, float64(base.HeapInuse)/1e6)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sharding: "+format+"\n", args...)
}

// createAll creates n small objects in a new namespace with concurrent
// creators.
func createAll(ctx context.Context, dyn dynamic.Interface, ns string, n, creators int) error {
	return createLabelled(ctx, dyn, ns, n, creators, false)
}

// createLabelled is createAll; with bucketLabel, each object carries the
// bucket label of --shard-mode=label (64 buckets) from its creation, as
// the operator's mutating webhook stamps it.
func createLabelled(ctx context.Context, dyn dynamic.Interface, ns string, n, creators int, bucketLabel bool) error {
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
		return err
	}
	ri := dyn.Resource(gvr).Namespace(ns)
	start := time.Now()
	var created atomic.Int64
	return plane.CreateMany(ctx, n, creators, func(ctx context.Context, i int) error {
		meta := map[string]any{"name": fmt.Sprintf("obj-%06d", i)}
		if bucketLabel {
			b := sharding.KeyBucket(sharding.ObjectKey(ns, meta["name"].(string)), shards)
			meta["labels"] = map[string]any{sharding.LabelKey(shards): strconv.Itoa(b)}
		}
		_, err := ri.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": meta,
			"spec":     map[string]any{"field": "value"},
		}}, metav1.CreateOptions{})
		if err == nil {
			if c := created.Add(1); c%10000 == 0 {
				logf("%d objects created in %s", c, time.Since(start).Round(time.Second))
			}
		}
		return err
	})
}

func deleteAll(ctx context.Context, dyn dynamic.Interface, ns string) error {
	return dyn.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

// operatorProc is an operator process and its reports.
type operatorProc struct {
	log     string
	cmd     *exec.Cmd
	reports chan report
	done    chan struct{}
}

func startOperator(kubeconfig, work, name, ns string, sharded bool, env []string) (*operatorProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"run", "-n", ns, "-q"}
	if sharded {
		args = append(args, "--shards="+strconv.Itoa(shards))
	}
	for _, e := range env {
		if mode, ok := strings.CutPrefix(e, "SHARDING_BENCH_SHARD_MODE="); ok && mode != "" {
			args = append(args, "--shard-mode="+mode)
		}
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), append(env, "SHARDING_BENCH_MODE=operator", "KUBECONFIG="+kubeconfig, "SHARDING_BENCH_IDENTITY="+name)...)
	logDir := work
	if d := os.Getenv("SHARDING_BENCH_LOGDIR"); d != "" {
		logDir = d // kept after the run
	}
	logFile, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &operatorProc{log: logFile.Name(), cmd: cmd, reports: make(chan report, 16), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer logFile.Close()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r report
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				p.reports <- r
			}
		}
		_ = cmd.Wait()
	}()
	if _, err := p.await(); err != nil { // the first report says it is ready for signals
		return nil, err
	}
	return p, nil
}

// ask signals the process and returns its report.
func (p *operatorProc) ask(sig syscall.Signal) (report, error) {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return report{}, err
	}
	return p.await()
}

// await returns the process's next report.
func (p *operatorProc) await() (report, error) {
	select {
	case r := <-p.reports:
		return r, nil
	case <-p.done:
		data, _ := os.ReadFile(p.log)
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		return report{}, fmt.Errorf("the operator %d exited; its log ends with:\n%s", p.cmd.Process.Pid, data)
	case <-time.After(time.Minute):
		return report{}, fmt.Errorf("the operator %d does not report", p.cmd.Process.Pid)
	}
}

func (p *operatorProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// awaitHandled polls the operators until their handlers have run n times
// in all.
func awaitHandled(ops []*operatorProc, n int64, timeout time.Duration) ([]report, error) {
	deadline := time.Now().Add(timeout)
	for {
		reps := make([]report, len(ops))
		var total int64
		for i, op := range ops {
			r, err := op.ask(syscall.SIGUSR2)
			if err != nil {
				return nil, err
			}
			reps[i] = r
			total += r.Handled
		}
		if total >= n {
			return reps, nil
		}
		if time.Now().After(deadline) {
			return reps, fmt.Errorf("%d of %d objects handled after %s", total, n, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// operate is one operator process.
func operate() error {
	cost := os.Getenv("SHARDING_BENCH_COST")
	cpu, _ := time.ParseDuration(os.Getenv("SHARDING_BENCH_CPU"))
	sleep, _ := time.ParseDuration(os.Getenv("SHARDING_BENCH_SLEEP"))
	workers, _ := strconv.Atoi(os.Getenv("SHARDING_BENCH_WORKERS"))
	var handled, first, last atomic.Int64
	keepTimes := os.Getenv("SHARDING_BENCH_TIMES") != ""
	var timesMu sync.Mutex
	var times []int64
	sel := kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	seen := newSeenSet(os.Getenv("SHARDING_BENCH_N"))
	register := func(r *kopf.Registry) error {
		if cost == "events" {
			return r.AddEvent(kopf.EventHandler{ID: "seen", Selector: sel, Fn: func(_ context.Context, kw *kopf.EventKwargs) error {
				seen.mark(kw.Name)
				return nil
			}})
		}
		return r.AddChanging(kopf.ChangingHandler{ID: "create_fn", Selector: sel, Reasons: []kopf.Reason{kopf.ReasonCreate},
			Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
				switch cost {
				case "cpu":
					burn(cpu)
				case "sleep":
					time.Sleep(sleep)
				}
				now := time.Now().UnixNano()
				first.CompareAndSwap(0, now)
				last.Store(now)
				handled.Add(1)
				if keepTimes {
					timesMu.Lock()
					times = append(times, now)
					timesMu.Unlock()
				}
				return map[string]any{"message": "done"}, nil
			}})
	}
	var rc receiving
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	enc := json.NewEncoder(os.Stdout)
	_ = enc.Encode(report{}) // ready for the signals (their default is to terminate)
	go func() {
		for sig := range sigs {
			r := report{Handled: handled.Load(), First: first.Load(), Last: last.Load(), CPU: cpuSeconds(),
				Distinct: seen.distinct.Load(), LastNew: seen.lastNew.Load(), Received: seen.calls.Load(), Listed: rc.listed.Load(), Watched: rc.watched.Load()}
			timesMu.Lock()
			r.Times = slices.Clone(times)
			timesMu.Unlock()
			if sig == syscall.SIGUSR1 {
				runtime.GC()
				debug.FreeOSMemory()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				r.HeapInuse = int64(ms.HeapInuse)
				r.RSS = rss()
			}
			_ = enc.Encode(r)
		}
	}()
	level := slog.LevelWarn
	_ = level.UnmarshalText([]byte(os.Getenv("SHARDING_BENCH_LOGLEVEL"))) // unset: WARN
	opts := []kopf.Option{kopf.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))}
	if group := os.Getenv("SHARDING_BENCH_GROUP"); group != "" {
		opts = append(opts, kopf.WithSharding(kopf.Sharding{Group: group, Namespace: "default", Identity: os.Getenv("SHARDING_BENCH_IDENTITY"), LeaseDuration: 4 * time.Second, RenewInterval: time.Second}))
	}
	if cost == "events" {
		cfg, err := countingConfig(&rc)
		if err != nil {
			return err
		}
		opts = append(opts, kopf.WithConfig(cfg))
	}
	if workers > 0 {
		opts = append(opts, kopf.WithSettings(func(s *kopf.Settings) { s.Queueing.WorkerLimit = workers }))
	}
	if code := kopf.Main(register, opts...); code != 0 {
		return fmt.Errorf("exit code %d", code)
	}
	return nil
}

// burn keeps one CPU busy for d (of the thread's CPU time, not the wall).
func burn(d time.Duration) {
	runtime.LockOSThread() // the thread's CPU clock is the goroutine's
	defer runtime.UnlockOSThread()
	start := threadCPU()
	x := uint64(1)
	for threadCPU()-start < d {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 42 {
		fmt.Fprint(os.Stderr, "")
	}
}

func threadCPU() time.Duration {
	var ts syscall.Timespec
	// CLOCK_THREAD_CPUTIME_ID = 3
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

func cpuSeconds() float64 {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

func rss() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}
