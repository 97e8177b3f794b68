package partition

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/kopftest"
)

// The slowness's shape: how late every request of the replica is, and
// for how long (Kopf's issue says a minute; 40 s keeps the package within
// its time on a loaded machine, and is long enough for a pile-up to show).
const (
	slowLatency = 500 * time.Millisecond
	slowFor     = 40 * time.Second
)

// A replica whose every request to the API server is half a second late
// for a while, with objects created and changed meanwhile: its
// goroutines, memory and connections stay bounded (no pile-up of
// requests: the workers and the requests in flight are bounded), no
// request fails, and once the latency is gone everything is handled, each
// change once.
func TestSlowness(t *testing.T) {
	const n = 30
	ns := newNamespace(t, "slow")
	objs := kopftest.NewObjects(t, shared.Config, examples, ns)
	dir := t.TempDir()
	rec := filepath.Join(dir, "record")
	p := startProxy(t)
	addr := freeAddr(t)
	op := startReplica(t, dir, "replica", kubeconfig(t, dir, "kubeconfig", p), rec, []string{"PARTOP_SLEEP=100ms"},
		"-n", ns, "--standalone", "--metrics-bind-address", addr, "--metrics-secure=false")

	for i := range n {
		objs.Create(example(fmt.Sprintf("one-%02d", i), 1))
	}
	one := names(ns, "one", n)
	waitFor(t, "wave 1 handled", 60*time.Second, func() bool { return readRecord(t, rec).finished("create_fn", one, 1) })
	base := scrape(t, addr)

	// Slow: a new object and a change of an old one every second.
	p.SetLatency(slowLatency)
	peak := base
	var created, changed []string
	began := time.Now()
	for i := 0; time.Since(began) < slowFor; i++ {
		name := fmt.Sprintf("two-%02d", i)
		objs.Create(example(name, 2))
		created = append(created, ns+"/"+name)
		old := fmt.Sprintf("one-%02d", i%n)
		if i < n {
			objs.MergePatch(old, map[string]any{"spec": map[string]any{"wave": 2}})
			changed = append(changed, ns+"/"+old)
		}
		if i%2 == 0 {
			peak = peak.max(scrape(t, addr))
		}
		time.Sleep(time.Second) // the pace of the changes, not a wait for an outcome
	}
	peak = peak.max(scrape(t, addr))
	p.SetLatency(0)
	fastAt := time.Now()
	doneAt := waitFor(t, "every change handled", 2*time.Minute, func() bool {
		r := readRecord(t, rec)
		return r.finished("create_fn", created, 2) && r.finished("update_fn", changed, 2)
	})
	end := scrape(t, addr)
	op.Stop(t, 30*time.Second)

	_, conns := p.Conns()
	t.Logf("%d objects created and %d changed during %s of %s latency; goroutines %v → at most %v; heap in use %.1f → at most %.1f MiB; RSS at most %.1f MiB; %v requests (%v failed) during the slowness, %v in all; at most %d connections to the API server; everything handled %s after the latency was gone",
		len(created), len(changed), slowFor, slowLatency, base.goroutines, peak.goroutines, base.heap/(1<<20), peak.heap/(1<<20), peak.rss/(1<<20),
		end.requests-base.requests, end.failed-base.failed, end.requests, conns, doneAt.Sub(fastAt).Round(time.Millisecond))
	// At most one worker per object with changes (WorkerLimit 64), and the
	// requests in flight bounded (MaxInFlight 16): not a goroutine per
	// request waiting.
	if limit := base.goroutines + 150; peak.goroutines > limit {
		t.Errorf("the goroutines grew from %v to %v (more than %v): a pile-up", base.goroutines, peak.goroutines, limit)
	}
	if limit := base.heap + 64<<20; peak.heap > limit {
		t.Errorf("the heap in use grew from %.1f to %.1f MiB", base.heap/(1<<20), peak.heap/(1<<20))
	}
	if end.failed > base.failed {
		t.Errorf("%v requests failed during the slowness", end.failed-base.failed)
	}
	if conns > 8 {
		t.Errorf("%d connections to the API server at once: a pile-up of requests", conns)
	}
	if reruns := readRecord(t, rec).audit(t, 0, time.Time{}); reruns != 0 {
		t.Errorf("%d handlers ran again", reruns)
	}
}

// freeAddr is a free address on loopback.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// sample is what the slowness test reads of the operator's metrics.
type sample struct {
	goroutines, heap, rss float64
	requests, failed      float64 // kopf_api_requests_total, and those without a response
}

func (s sample) max(o sample) sample {
	return sample{max(s.goroutines, o.goroutines), max(s.heap, o.heap), max(s.rss, o.rss), o.requests, o.failed}
}

// scrape reads the operator's /metrics at addr (polling until it serves).
func scrape(t *testing.T, addr string) sample {
	t.Helper()
	var s sample
	waitFor(t, "the metrics", 30*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		s = sample{}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			name, value, ok := strings.Cut(sc.Text(), " ")
			v, err := strconv.ParseFloat(value, 64)
			if !ok || err != nil || strings.HasPrefix(name, "#") {
				continue
			}
			switch {
			case name == "go_goroutines":
				s.goroutines = v
			case name == "go_memstats_heap_inuse_bytes":
				s.heap = v
			case name == "process_resident_memory_bytes":
				s.rss = v
			case strings.HasPrefix(name, "kopf_api_requests_total{"):
				s.requests += v
				if strings.Contains(name, `code="<error>"`) {
					s.failed += v
				}
			}
		}
		return resp.StatusCode == http.StatusOK && s.goroutines > 0
	})
	return s
}
