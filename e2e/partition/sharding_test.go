package partition

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf/e2e/internal/faultproxy"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// partop's sharding: buckets, member Lease duration and renew interval.
const (
	shardBuckets  = 16
	shardDuration = 4 * time.Second
	shardInterval = time.Second
)

// Three sharded replicas, one cut off from the API server (its
// connections stalled) while it handles objects: it gives its buckets
// up before its member Lease expires (LeaseDuration less one and a half
// RenewIntervals after its last renewal began, its cycles abandoned by
// half an interval before the expiry), and only then do the others take
// them over; once the proxy passes again, it rejoins and gets its share
// back.
func TestPartitionSharded(t *testing.T) {
	const n = 45
	ns := newNamespace(t, "shards")
	objs := kopftest.NewObjects(t, shared.Config, examples, ns)
	dir := t.TempDir()
	rec := filepath.Join(dir, "record")
	p := startProxy(t)
	env := []string{fmt.Sprintf("PARTOP_SHARDS=%d", shardBuckets), "PARTOP_SLEEP=" + cutSleep.String()}
	args := []string{"-n", ns}
	a := startReplica(t, dir, "replica-a", kubeconfig(t, dir, "a.kubeconfig", p), rec, env, args...)
	direct := kubeconfig(t, dir, "direct.kubeconfig", nil)
	b := startReplica(t, dir, "replica-b", direct, rec, env, args...)
	c := startReplica(t, dir, "replica-c", direct, rec, env, args...)
	replicas := []*proc.Process{a, b, c}
	for _, r := range replicas {
		r.WaitLog(t, "Sharding: 3 replicas in the group partop", 60*time.Second)
	}
	const acquired = "Sharding: acquired buckets"
	waitFor(t, "each replica's share", 30*time.Second, func() bool {
		for _, r := range replicas {
			if !strings.Contains(r.Logs(), acquired) {
				return false
			}
		}
		return true
	})

	create := func(prefix string, wave int) []string {
		for i := range n {
			objs.Create(example(fmt.Sprintf("%s-%02d", prefix, i), wave))
		}
		return names(ns, prefix, n)
	}
	one := create("one", 1)
	waitFor(t, "wave 1 handled", 60*time.Second, func() bool { return readRecord(t, rec).finished("create_fn", one, 1) })
	buckets := bucketsOf(t, ns)
	owned := map[int]bool{} // replica-a's buckets, as wave 1 shows them
	for _, s := range readRecord(t, rec) {
		if s.pid == a.Pid() {
			owned[buckets[s.object]] = true
		}
	}
	if len(owned) == 0 {
		t.Fatal("replica-a handled nothing of wave 1")
	}

	// Wave 2: replica-a is cut while it handles it.
	two := create("two", 2)
	waitFor(t, "replica-a handling wave 2", 30*time.Second, func() bool { return readRecord(t, rec).has(a.Pid(), "2") })
	seenB, seenC := strings.Count(b.Logs(), acquired), strings.Count(c.Logs(), acquired)
	cutAt := time.Now()
	p.Set(faultproxy.Stall)
	gaveUpAt := a.WaitLog(t, "Sharding: the lease of replica-a has not been renewed for", 30*time.Second)
	tookAt := waitFor(t, "the others' claims of replica-a's buckets", 30*time.Second, func() bool {
		return strings.Count(b.Logs(), acquired) > seenB || strings.Count(c.Logs(), acquired) > seenC
	})
	three := create("three", 3) // during the cut
	waitFor(t, "waves 2 and 3 handled", 60*time.Second, func() bool {
		r := readRecord(t, rec)
		return r.finished("create_fn", two, 2) && r.finished("create_fn", three, 3)
	})

	// The proxy passes again: replica-a rejoins and gets its share back.
	seenA := strings.Count(a.Logs(), acquired)
	healAt := time.Now()
	p.Set(faultproxy.Pass)
	rejoinAt := waitLogMore(t, a, acquired, seenA, 60*time.Second)
	four := create("four", 4)
	waitFor(t, "wave 4 handled", 60*time.Second, func() bool { return readRecord(t, rec).finished("create_fn", four, 4) })
	for _, r := range replicas {
		r.Stop(t, 30*time.Second)
	}

	r := readRecord(t, rec)
	buckets = bucketsOf(t, ns)
	aLast := r.last(a.Pid(), healAt)
	var othersFirst time.Time // the first step of another replica on replica-a's objects after the cut
	spread := map[int]int{}   // wave 4's objects by pid
	for _, s := range r {
		if s.pid != a.Pid() && s.at.After(cutAt) && owned[buckets[s.object]] && (othersFirst.IsZero() || s.at.Before(othersFirst)) {
			othersFirst = s.at
		}
		if s.wave == "4" && s.event == "invoked" {
			spread[s.pid]++
		}
	}
	t.Logf("replica-a gave its buckets up %s after the cut (bound: the Lease %s less 1.5 renew intervals of %s after its last renewal began), its last handler step %s after the cut; the others took them over %s after the cut, their first step %s after replica-a's last; replica-a rejoined %s after the proxy passed again; wave 4 by pid: %v",
		gaveUpAt.Sub(cutAt).Round(time.Millisecond), shardDuration, shardInterval, aLast.Sub(cutAt).Round(time.Millisecond),
		tookAt.Sub(cutAt).Round(time.Millisecond), othersFirst.Sub(aLast).Round(time.Millisecond), rejoinAt.Sub(healAt).Round(time.Millisecond), spread)
	if bound := shardDuration - shardInterval*3/2 + 500*time.Millisecond; gaveUpAt.Sub(cutAt) > bound { // the log's polling and a loaded machine
		t.Errorf("replica-a gave its buckets up %s after the cut, more than %s", gaveUpAt.Sub(cutAt), bound)
	}
	if othersFirst.IsZero() || !aLast.Before(othersFirst) {
		t.Errorf("replica-a's last handler step (%s) is not before the others' first on its objects (%s)", clock(aLast), clock(othersFirst))
	}
	cancelled := r.count(a.Pid(), "cancelled")
	if cancelled == 0 {
		t.Error("replica-a abandoned no handler at the cut")
	}
	reruns := r.audit(t, a.Pid(), cutAt)
	t.Logf("%d handlers re-run after finishing on replica-a at the cut (their outcome not stored); %d handlers abandoned on replica-a", reruns, cancelled)
	for wave, objects := range map[int][]string{1: one, 2: two, 3: three, 4: four} {
		if !r.finished("create_fn", objects, wave) {
			t.Errorf("wave %d: not every object handled", wave)
		}
	}
	for _, rep := range replicas {
		if spread[rep.Pid()] == 0 {
			t.Errorf("%s handled nothing of wave 4: the objects are not spread again", rep.Name)
		}
	}
}

// bucketsOf is the bucket of every KopfExample in ns, by "ns/name".
func bucketsOf(t *testing.T, ns string) map[string]int {
	t.Helper()
	list, err := client(t).Resource(examples).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, o := range list.Items {
		out[ns+"/"+o.GetName()] = sharding.Bucket(string(o.GetUID()), shardBuckets)
	}
	return out
}
