package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The scale part (issue 27): -scale objects, pre-created once, served by
// 1, 2 and 4 sharded replicas (-replicas) in turn, each replica a process
// with an on.event handler that only marks the object seen (no write of
// its own: the writes are the sharding's stamps, one per object and
// owner). Per replica: the objects received from the API server (listed,
// and watched: counted in the GET responses' bodies, before any filter),
// the distinct objects handled, the settled RSS, the CPU until caught up;
// the API server's and etcd's CPU over the same time (their /proc stat).
// Caught up: every object handled by some replica and no replica's count
// changed for -settle; the time is from the replicas' start to the last
// object first handled.

// scaleRow is one run: a mode and a number of replicas.
type scaleRow struct {
	mode      string
	replicas  int
	catchUp   time.Duration
	reps      []report
	apiCPU    float64 // seconds over the run
	etcdCPU   float64
	handled   int64 // distinct objects handled, summed over the replicas
	wallTotal time.Duration
	api       apiCounts // over the run
}

// apiCounts are kube-apiserver's counters of the resource (its /metrics):
// the WATCH requests ended, the watchers that its watch cache closed as
// unresponsive (their buffer of new events full while they were still
// sending, e.g. their initial events), and the initial events sent.
type apiCounts struct{ watchesEnded, terminated, initEvents float64 }

func (a apiCounts) minus(b apiCounts) apiCounts {
	return apiCounts{a.watchesEnded - b.watchesEnded, a.terminated - b.terminated, a.initEvents - b.initEvents}
}

// scrapeAPI reads apiCounts from kube-apiserver's /metrics (zeros if it
// cannot).
func scrapeAPI(cfg *rest.Config) apiCounts {
	var c apiCounts
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return c
	}
	resp, err := hc.Get(strings.TrimSuffix(cfg.Host, "/") + "/metrics")
	if err != nil {
		return c
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, `resource="kopfexamples"`) {
			continue
		}
		v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		switch {
		case strings.HasPrefix(line, "apiserver_request_total{") && strings.Contains(line, `verb="WATCH"`):
			c.watchesEnded += v
		case strings.HasPrefix(line, "apiserver_terminated_watchers_total{"):
			c.terminated += v
		case strings.HasPrefix(line, "apiserver_init_events_total{"):
			c.initEvents += v
		}
	}
	return c
}

// runScale runs every mode with every number of replicas on n objects of
// the namespace "scale-<mode>", created here; for the label mode, with
// the bucket label from their creation (as the operator's webhook stamps
// it), so that what is measured is the watches, not the labeller.
func runScale(ctx context.Context, dyn dynamic.Interface, cfg *rest.Config, kubeconfig, work string, n, creators int, modes []string, replicas []int, settle time.Duration) ([]scaleRow, error) {
	var rows []scaleRow
	for _, mode := range modes {
		start := time.Now()
		if err := createLabelled(ctx, dyn, "scale-"+mode, n, creators, mode == "label"); err != nil {
			return nil, err
		}
		logf("%d objects created in %s", n, time.Since(start).Round(time.Second))
		for _, r := range replicas {
			row, err := scaleRun(cfg, kubeconfig, work, n, mode, r, settle)
			if err != nil {
				return rows, fmt.Errorf("%s, %d replicas: %w", mode, r, err)
			}
			logf("%s, %d replicas: caught up in %.1f s, %d handled; %+v", mode, r, row.catchUp.Seconds(), row.handled, row.reps)
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// scaleRun starts the replicas, waits until they are caught up, measures
// them, and stops them.
func scaleRun(cfg *rest.Config, kubeconfig, work string, n int, mode string, replicas int, settle time.Duration) (scaleRow, error) {
	group := fmt.Sprintf("scale-%s-%d", mode, replicas)
	env := []string{"SHARDING_BENCH_COST=events", "SHARDING_BENCH_N=" + strconv.Itoa(n), "SHARDING_BENCH_GROUP=" + group, "SHARDING_BENCH_SHARD_MODE=" + mode}
	api0, etcd0, counts0 := childCPU("kube-apiserver"), childCPU("etcd"), scrapeAPI(cfg)
	start := time.Now()
	var ops []*operatorProc
	defer func() {
		for _, op := range ops {
			op.stop()
		}
	}()
	for i := range replicas {
		op, err := startOperator(kubeconfig, work, fmt.Sprintf("%s-r%d", group, i), "scale-"+mode, true, env)
		if err != nil {
			return scaleRow{}, err
		}
		ops = append(ops, op)
	}
	reps, err := awaitSettled(ops, int64(n), settle, 30*time.Minute)
	if err != nil {
		return scaleRow{}, err
	}
	row := scaleRow{mode: mode, replicas: replicas, wallTotal: time.Since(start)}
	row.apiCPU, row.etcdCPU = childCPU("kube-apiserver")-api0, childCPU("etcd")-etcd0
	row.api = scrapeAPI(cfg).minus(counts0)
	var last int64
	for i, op := range ops {
		settled, err := op.ask(syscall.SIGUSR1)
		if err != nil {
			return row, err
		}
		settled.CPU = reps[i].CPU // the CPU until caught up, not the settling's
		reps[i] = settled
		last = max(last, settled.LastNew)
		row.handled += settled.Distinct
	}
	row.reps, row.catchUp = reps, time.Duration(last-start.UnixNano())
	return row, nil
}

// awaitSettled polls the replicas until every one of the n objects is
// handled by some replica and no replica's count changed for settle.
func awaitSettled(ops []*operatorProc, n int64, settle, timeout time.Duration) ([]report, error) {
	deadline := time.Now().Add(timeout)
	var prev []int64
	var stableSince time.Time
	for {
		reps := make([]report, len(ops))
		counts := make([]int64, len(ops))
		var total int64
		for i, op := range ops {
			r, err := op.ask(syscall.SIGUSR2)
			if err != nil {
				return nil, err
			}
			reps[i], counts[i] = r, r.Distinct+r.Received
			total += r.Distinct
		}
		if !slicesEqual(counts, prev) {
			prev, stableSince = counts, time.Now()
		}
		if total >= n && time.Since(stableSince) >= settle {
			return reps, nil
		}
		if time.Now().After(deadline) {
			return reps, fmt.Errorf("%d of %d objects handled after %s", total, n, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// printScale prints the scale runs' table.
func printScale(n int, rows []scaleRow) {
	fmt.Printf("\n| mode | replicas | caught up in (s) | objects handled (sum of replicas) | received per replica: listed + watched | received per replica / N | settled RSS per replica (MB) | CPU per replica until caught up (s) | kube-apiserver CPU (s) | etcd CPU (s) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		var recv, ratio, rss, cpu []string
		for _, rep := range r.reps {
			recv = append(recv, fmt.Sprintf("%d + %d", rep.Listed, rep.Watched))
			ratio = append(ratio, fmt.Sprintf("%.2f", float64(rep.Listed+rep.Watched)/float64(n)))
			rss = append(rss, fmt.Sprintf("%.0f", float64(rep.RSS)/1e6))
			cpu = append(cpu, fmt.Sprintf("%.1f", rep.CPU))
		}
		fmt.Printf("| %s | %d | %.1f | %d | %s | %s | %s | %s | %.1f | %.1f |\n", r.mode, r.replicas, r.catchUp.Seconds(), r.handled,
			strings.Join(recv, "; "), strings.Join(ratio, ", "), strings.Join(rss, ", "), strings.Join(cpu, ", "), r.apiCPU, r.etcdCPU)
	}
	fmt.Printf("\nkube-apiserver's counters of the resource over each run (its /metrics):\n\n| mode | replicas | WATCH requests ended | watchers closed as unresponsive | initial events sent |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Printf("| %s | %d | %.0f | %.0f | %.0f |\n", r.mode, r.replicas, r.api.watchesEnded, r.api.terminated, r.api.initEvents)
	}
}

// childCPU is the CPU time (s) of this process's child named comm (the
// control plane's kube-apiserver or etcd), 0 if there is none.
func childCPU(comm string) float64 {
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || s[open+1:end] != comm {
			continue
		}
		f := strings.Fields(s[end+2:])
		if len(f) < 13 || f[1] != self {
			continue
		}
		utime, _ := strconv.ParseFloat(f[11], 64)
		stime, _ := strconv.ParseFloat(f[12], 64)
		return (utime + stime) / 100 // USER_HZ
	}
	return 0
}

// receiving counts what an operator receives in its GET responses: the
// objects of the resource (each `"kind":"KopfExample"` in a body: a listed
// item or a watch event's object), in lists and in watches apart.
type receiving struct {
	listed, watched atomic.Int64
}

var objectNeedle = []byte(`"kind":"KopfExample"`)

// countingConfig loads the kubeconfig of $KUBECONFIG with a transport that
// counts what is received into rc.
func countingConfig(rc *receiving) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return nil, err
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err != nil || req.Method != http.MethodGet || !strings.Contains(req.URL.Path, "/kopfexamples") {
				return resp, err
			}
			c := &rc.listed
			if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
				c = &rc.watched
			}
			resp.Body = &countingBody{ReadCloser: resp.Body, n: c}
			return resp, nil
		})
	})
	return cfg, nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// countingBody counts the needle in what is read, across reads.
type countingBody struct {
	io.ReadCloser
	n    *atomic.Int64
	tail []byte // the last len(needle)-1 bytes read
}

func (b *countingBody) Read(p []byte) (int, error) {
	k, err := b.ReadCloser.Read(p)
	chunk, l := p[:k], len(objectNeedle)-1
	count := bytes.Count(chunk, objectNeedle)
	// A needle across the reads' boundary: in the tail and the chunk's
	// head, each shorter than it.
	join := append(b.tail, chunk[:min(k, l)]...)
	count += bytes.Count(join, objectNeedle)
	if k >= l {
		b.tail = append(b.tail[:0], chunk[k-l:]...)
	} else {
		b.tail = append(b.tail[:0], join[max(0, len(join)-l):]...)
	}
	b.n.Add(int64(count))
	return k, err
}

// seenSet marks the objects handled by their number (obj-NNNNNN): a
// bitset, so that counting them costs the replica next to nothing.
type seenSet struct {
	bits              []atomic.Uint64
	distinct, lastNew atomic.Int64
	calls             atomic.Int64
}

func newSeenSet(n string) *seenSet {
	size, _ := strconv.Atoi(n)
	return &seenSet{bits: make([]atomic.Uint64, size/64+1)}
}

func (s *seenSet) mark(name string) {
	s.calls.Add(1)
	i, err := strconv.Atoi(strings.TrimPrefix(name, "obj-"))
	if err != nil || i/64 >= len(s.bits) {
		return
	}
	w, bit := &s.bits[i/64], uint64(1)<<(i%64)
	for {
		old := w.Load()
		if old&bit != 0 {
			return
		}
		if w.CompareAndSwap(old, old|bit) {
			s.distinct.Add(1)
			s.lastNew.Store(time.Now().UnixNano())
			return
		}
	}
}
