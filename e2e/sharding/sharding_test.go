// Package sharding_test checks, against a real control plane, that
// sharded replicas of an operator (separate processes, --shards) split the
// objects between them and hand them over safely when a replica is killed
// or added: every object handled exactly once per change, none by two
// replicas at once, and a stale owner's writes rejected by the API server.
package sharding_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/runtime/sharding"
)

var kopfexamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

const (
	objects   = 1000
	buckets   = 64
	namespace = "default"
)

func startCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	return cluster.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")))
}

// rig is one test's control plane and what its replicas share: the
// shardop binary, a kubeconfig and the record of their handlers' runs.
type rig struct {
	dir, bin, kubeconfig, record string
	config                       *rest.Config
	cs                           kubernetes.Interface
	ri                           dynamic.ResourceInterface // KopfExamples in namespace
}

// newRig starts a control plane with the KopfExample CRD and builds shardop.
func newRig(t *testing.T) *rig {
	t.Helper()
	dir := t.TempDir()
	env := &rig{dir: dir, bin: proc.Build(t, "./internal/shardop", dir), record: filepath.Join(dir, "record")}
	c := startCluster(t)
	env.kubeconfig, env.config = c.Kubeconfig(t, dir), c.Config
	env.cs = kubernetes.NewForConfigOrDie(c.Config)
	env.ri = dynamic.NewForConfigOrDie(c.Config).Resource(kopfexamples).Namespace(namespace)
	return env
}

// replica starts the replica identity of shardop, with extra flags.
func (env *rig) replica(t *testing.T, identity string, extra ...string) *proc.Process {
	t.Helper()
	return startReplica(t, env.bin, env.kubeconfig, env.record, env.dir, identity, extra...)
}

// createExample creates the KopfExample name in wave 0.
func createExample(ri dynamic.ResourceInterface, name string) (*unstructured.Unstructured, error) {
	return ri.Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"wave": int64(0)},
	}}, metav1.CreateOptions{})
}

// holders returns the holder of every bucket Lease of the shardop group
// ("" if unheld or missing).
func holders(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	list, err := cs.CoordinationV1().Leases(namespace).List(ctx, metav1.ListOptions{LabelSelector: sharding.GroupLabel + "=shardop," + sharding.RoleLabel + "=bucket"})
	if err != nil {
		return nil, err
	}
	out := make([]string, buckets)
	for _, l := range list.Items {
		var b int
		if _, err := fmt.Sscanf(l.Name, "shardop-bucket-%d", &b); err != nil || b < 0 || b >= buckets {
			continue
		}
		if l.Spec.HolderIdentity != nil {
			out[b] = *l.Spec.HolderIdentity
		}
	}
	return out, nil
}

// awaitAssignment waits until every bucket is held as rendezvous hashing
// assigns it among the members, and returns how long it took.
func awaitAssignment(t *testing.T, cs kubernetes.Interface, members []string, since time.Time, timeout time.Duration) time.Duration {
	t.Helper()
	want := sharding.Assign(buckets, members)
	var got []string
	err := cluster.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		var err error
		got, err = holders(ctx, cs)
		return err == nil && slices.Equal(got, want), err
	})
	if err != nil {
		t.Fatalf("the buckets are not held as assigned among %v after %s: %v\nheld: %v\nwant: %v", members, timeout, err, got, want)
	}
	return time.Since(since)
}

// forEach runs fn for every object name with 16 concurrent clients.
func forEach(fn func(name string) error) error {
	var wg sync.WaitGroup
	names := make(chan string)
	var failed atomic.Value
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				if err := fn(name); err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	for i := range objects {
		names <- fmt.Sprintf("obj-%04d", i)
	}
	close(names)
	wg.Wait()
	err, _ := failed.Load().(error)
	return err
}

// awaitWave waits until every object's handler id reports the wave in its
// status.
func awaitWave(t *testing.T, ri dynamic.ResourceInterface, id string, wave int64, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var missing int
	err := cluster.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		missing = objects - len(list.Items)
		for _, item := range list.Items {
			w, found, _ := unstructured.NestedInt64(item.Object, "status", id, "wave")
			if !found || w != wave {
				missing++
			}
		}
		return missing == 0, nil
	})
	if err != nil {
		t.Fatalf("%d objects lack %s's result of wave %d after %s: %v", missing, id, wave, timeout, err)
	}
	return time.Since(start)
}

func setWave(ri dynamic.ResourceInterface, wave int) func(string) error {
	return func(name string) error {
		patch := fmt.Appendf(nil, `{"spec":{"wave":%d}}`, wave)
		_, err := ri.Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
}

// Three sharded replicas share 1,000 objects; one is killed (SIGKILL) and
// one is added while every object changes: each change of each object is
// handled once, by one replica at a time, and the buckets are rebalanced
// within the lease's duration.
func TestShardedReplicasHandleEachChangeOnce(t *testing.T) {
	env := newRig(t)
	cs, record := env.cs, env.record
	cfg := rest.CopyConfig(env.config)
	cfg.QPS, cfg.Burst = -1, 0
	ri := dynamic.NewForConfigOrDie(cfg).Resource(kopfexamples).Namespace(namespace)

	replicas := []*proc.Process{}
	for i := 1; i <= 3; i++ {
		replicas = append(replicas, env.replica(t, fmt.Sprintf("replica-%d", i)))
	}
	started := time.Now()
	took := awaitAssignment(t, cs, []string{"replica-1", "replica-2", "replica-3"}, started, 60*time.Second)
	t.Logf("3 replicas hold their buckets %s after their start", took.Round(time.Millisecond))

	// Wave 0: the objects are created; each is handled by one replica.
	err := forEach(func(name string) error {
		_, err := createExample(ri, name)
		return err
	})
	if err != nil {
		t.Fatalf("creating the objects: %v", err)
	}
	took = awaitWave(t, ri, "create_fn", 0, 3*time.Minute)
	t.Logf("wave 0: %d objects created and handled by 3 replicas in %s", objects, took.Round(time.Millisecond))
	a := readAudit(t, record)
	perPID := map[int]int{}
	for object, ch := range a.changes("create_fn", "0") {
		if len(ch.invoked) != 1 || len(ch.finished) != 1 {
			t.Errorf("wave 0: create_fn of %s invoked %d times and finished %d times, want once", object, len(ch.invoked), len(ch.finished))
			continue
		}
		perPID[ch.finished[0].pid]++
	}
	for _, p := range replicas {
		if n := perPID[p.Pid()]; n < objects/10 {
			t.Errorf("wave 0: replica %s handled %d of %d objects: the objects are not shared", p.Name, n, objects)
		}
	}
	t.Logf("wave 0: objects handled per replica: %v", perPID)

	// Wave 1: every object changes; a replica is killed mid-wave.
	killed := replicas[0]
	var killedAt time.Time
	var updated atomic.Int64
	err = forEach(func(name string) error {
		if updated.Add(1) == objects/3 {
			if err := killed.Signal(syscall.SIGKILL); err != nil {
				return err
			}
			<-killed.Done()
			killedAt = time.Now()
		}
		return setWave(ri, 1)(name)
	})
	if err != nil {
		t.Fatalf("wave 1: %v", err)
	}
	took = awaitAssignment(t, cs, []string{"replica-2", "replica-3"}, killedAt, 60*time.Second)
	t.Logf("wave 1: SIGKILL of %s: its buckets are held by the others %s after the kill (lease 8 s, renewal 1 s)", killed.Name, took.Round(time.Millisecond))
	took = awaitWave(t, ri, "update_fn", 1, 3*time.Minute)
	t.Logf("wave 1: every object's update handled %s after the wave's last patch", took.Round(time.Millisecond))
	a = readAudit(t, record)
	rerun := 0
	for object, ch := range a.changes("update_fn", "1") {
		var byLive, byKilled []run
		for _, r := range ch.finished {
			if r.pid == killed.Pid() {
				byKilled = append(byKilled, r)
			} else {
				byLive = append(byLive, r)
			}
		}
		switch {
		case len(byLive) > 1:
			t.Errorf("wave 1: update_fn of %s finished %d times on the live replicas, want at most once", object, len(byLive))
		case len(byLive)+len(byKilled) == 0:
			t.Errorf("wave 1: update_fn of %s never finished", object)
		case len(byLive) == 1 && len(byKilled) > 0:
			rerun++ // finished on the killed replica, which died before storing it
		}
		checkNoOverlap(t, "wave 1", object, ch, killed.Pid(), killedAt)
		interrupted := 0
		for _, r := range ch.invoked {
			if r.pid == killed.Pid() {
				interrupted++
			}
		}
		if live := len(ch.invoked) - interrupted; live > 1 {
			t.Errorf("wave 1: update_fn of %s invoked %d times on the live replicas, want at most once", object, live)
		}
	}
	t.Logf("wave 1: %d handlers finished on the killed replica without their outcome stored ran again on the new owner", rerun)

	// Wave 2: a replica is added; every object changes meanwhile.
	replicas = append(replicas, env.replica(t, "replica-4"))
	added := time.Now()
	waveDone := make(chan error, 1)
	go func() { waveDone <- forEach(setWave(ri, 2)) }()
	took = awaitAssignment(t, cs, []string{"replica-2", "replica-3", "replica-4"}, added, 60*time.Second)
	t.Logf("wave 2: replica-4 added: the buckets are rebalanced %s after its start", took.Round(time.Millisecond))
	if err := <-waveDone; err != nil {
		t.Fatalf("wave 2: %v", err)
	}
	took = awaitWave(t, ri, "update_fn", 2, 3*time.Minute)
	t.Logf("wave 2: every object's update handled %s after the wave's last patch", took.Round(time.Millisecond))
	a = readAudit(t, record)
	perPID = map[int]int{}
	explained := 0
	for object, ch := range a.changes("update_fn", "2") {
		if len(ch.invoked) != 1 || len(ch.finished) != 1 {
			t.Errorf("wave 2: update_fn of %s invoked %d times and finished %d times, want exactly once", object, len(ch.invoked), len(ch.finished))
			if explained++; explained <= 2 {
				explain(t, object, ch, replicas)
			}
			continue
		}
		perPID[ch.finished[0].pid]++
	}
	if n := perPID[replicas[3].Pid()]; n == 0 {
		t.Errorf("wave 2: the added replica handled no object")
	}
	t.Logf("wave 2: objects handled per replica: %v", perPID)
	for _, p := range replicas[1:] {
		p.Stop(t, 30*time.Second)
	}
	// What the replicas said of their hand-offs, for the record.
	for _, p := range replicas {
		data, _ := os.ReadFile(p.Log)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "Sharding: stopped") || strings.Contains(line, "Sharding: started") || strings.Contains(line, "Sharding: released") {
				t.Logf("%s: %s", p.Name, line)
			}
		}
	}
}

// checkNoOverlap fails if two replicas ran one object's handler at once:
// each run must start after the previous one of another replica ended (or
// after the kill, for a run the kill interrupted).
func checkNoOverlap(t *testing.T, wave, object string, ch *change, killedPID int, killedAt time.Time) {
	t.Helper()
	runs := slices.Clone(ch.invoked)
	sort.Slice(runs, func(i, j int) bool { return runs[i].at.Before(runs[j].at) })
	for i := 1; i < len(runs); i++ {
		prev, next := runs[i-1], runs[i]
		if prev.pid == next.pid {
			continue
		}
		end := killedAt
		for _, f := range ch.finished {
			if f.pid == prev.pid && !f.at.Before(prev.at) {
				end = f.at
				break
			}
		}
		if prev.pid != killedPID && end == killedAt {
			t.Errorf("%s: %s's run by pid %d never finished, yet pid %d ran it too", wave, object, prev.pid, next.pid)
			continue
		}
		if next.at.Before(end) {
			t.Errorf("%s: %s was handled by pids %d and %d at once (%s before the first ended)", wave, object, prev.pid, next.pid, end.Sub(next.at))
		}
	}
}

// explain logs what the audit and the replicas' logs say of an object.
func explain(t *testing.T, object string, ch *change, replicas []*proc.Process) {
	t.Helper()
	for _, r := range append(slices.Clone(ch.invoked), ch.finished...) {
		t.Logf("%s: %s by pid %d at %s", object, r.event, r.pid, r.at.Format("15:04:05.000000"))
	}
	for _, p := range replicas {
		data, _ := os.ReadFile(p.Log)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "["+object+"]") || strings.Contains(line, "Sharding:") {
				if len(line) > 300 {
					line = line[:300]
				}
				t.Logf("%s (pid %d): %s", p.Name, p.Pid(), line)
			}
		}
	}
}

// A handler retried after a temporary error, handed over (its replica
// exits) between two attempts, continues on the new owner from the
// progress persisted in the object: the retries are not started over.
func TestHandoffResumesFromPersistedProgress(t *testing.T) {
	env := newRig(t)
	cs, ri, record := env.cs, env.ri, env.record
	replicas := map[int]*proc.Process{}
	for _, id := range []string{"replica-a", "replica-b"} {
		p := env.replica(t, id)
		replicas[p.Pid()] = p
	}
	awaitAssignment(t, cs, []string{"replica-a", "replica-b"}, time.Now(), 60*time.Second)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "flaky"},
		"spec":     map[string]any{"flaky": true, "wave": int64(0)},
	}}
	if _, err := ri.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var first run
	err := cluster.WaitFor(context.Background(), 60*time.Second, func(context.Context) (bool, error) {
		for _, r := range readAudit(t, record).runs {
			if r.handler == "flaky_fn" && r.event == "invoked" {
				first = r
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("flaky_fn never ran: %v", err)
	}
	owner := replicas[first.pid]
	if owner == nil || first.retry != 0 {
		t.Fatalf("flaky_fn's first run: pid %d, retry %d", first.pid, first.retry)
	}
	owner.Stop(t, 30*time.Second) // the hand-off, during the 3-second delay before the retry
	err = cluster.WaitFor(context.Background(), 60*time.Second, func(ctx context.Context) (bool, error) {
		got, err := ri.Get(ctx, "flaky", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, found, _ := unstructured.NestedFieldNoCopy(got.Object, "status", "flaky_fn")
		return found, nil
	})
	if err != nil {
		t.Fatalf("flaky_fn never succeeded after the hand-off: %v", err)
	}
	var retries []string
	for _, r := range readAudit(t, record).runs {
		if r.handler != "flaky_fn" || r.event != "invoked" {
			continue
		}
		retries = append(retries, fmt.Sprintf("retry=%d by %s", r.retry, replicas[r.pid].Name))
		if r.pid != first.pid && r.retry == 0 {
			t.Errorf("the new owner started flaky_fn over (retry=0): the persisted progress was not used")
		}
	}
	if len(retries) != 3 {
		t.Errorf("flaky_fn ran %d times, want 3 (retry 0, 1, 2): %v", len(retries), retries)
	}
	t.Logf("flaky_fn's attempts: %v", retries)
}

// Daemons move with their objects' buckets: when a replica joins, the old
// owner stops the daemons of the buckets it gives up before the new owner
// starts them; the daemons of the objects that stay are not restarted.
func TestDaemonsMoveWithTheirBuckets(t *testing.T) {
	env := newRig(t)
	cs, ri, record := env.cs, env.ri, env.record
	pids := map[int]string{}
	var replicas []*proc.Process
	for _, id := range []string{"replica-a", "replica-b"} {
		p := env.replica(t, id)
		pids[p.Pid()] = id
		replicas = append(replicas, p)
	}
	awaitAssignment(t, cs, []string{"replica-a", "replica-b"}, time.Now(), 60*time.Second)
	const n = 30
	uids := map[string]string{} // namespace/name → uid
	for i := range n {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": fmt.Sprintf("daemon-%02d", i)},
			"spec":     map[string]any{"daemon": true, "wave": int64(0)},
		}}
		got, err := ri.Create(context.Background(), obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids[namespace+"/"+got.GetName()] = string(got.GetUID())
	}
	running := func(want map[string]string) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) {
			latest := map[string]run{}
			for _, r := range readAudit(t, record).runs {
				if r.handler == "daemon_fn" {
					latest[r.object] = r
				}
			}
			for object, who := range want {
				r, ok := latest[object]
				if !ok || r.event != "invoked" || pids[r.pid] != who {
					return false, nil
				}
			}
			return true, nil
		}
	}
	owners := func(members []string) map[string]string {
		want := map[string]string{}
		assigned := sharding.Assign(buckets, members)
		for object, uid := range uids {
			want[object] = assigned[sharding.Bucket(uid, buckets)]
		}
		return want
	}
	before := owners([]string{"replica-a", "replica-b"})
	if err := cluster.WaitFor(context.Background(), 60*time.Second, running(before)); err != nil {
		t.Fatalf("the daemons do not run on their objects' owners: %v", err)
	}
	p := env.replica(t, "replica-c")
	pids[p.Pid()] = "replica-c"
	replicas = append(replicas, p)
	after := owners([]string{"replica-a", "replica-b", "replica-c"})
	awaitAssignment(t, cs, []string{"replica-a", "replica-b", "replica-c"}, time.Now(), 60*time.Second)
	if err := cluster.WaitFor(context.Background(), 60*time.Second, running(after)); err != nil {
		t.Fatalf("the daemons do not run on their objects' new owners: %v", err)
	}
	moved := 0
	runs := map[string][]run{}
	for _, r := range readAudit(t, record).runs {
		if r.handler == "daemon_fn" {
			runs[r.object] = append(runs[r.object], r)
		}
	}
	for object, rs := range runs {
		sort.Slice(rs, func(i, j int) bool { return rs[i].at.Before(rs[j].at) })
		var seq []string
		for _, r := range rs {
			seq = append(seq, r.event+" by "+pids[r.pid])
		}
		if before[object] == after[object] {
			if len(rs) != 1 {
				t.Errorf("%s stayed on %s, yet its daemon did %v", object, after[object], seq)
			}
			continue
		}
		moved++
		want := []string{"invoked by " + before[object], "finished by " + before[object], "invoked by " + after[object]}
		if !slices.Equal(seq, want) {
			t.Errorf("%s moved from %s to %s: its daemon did %v, want %v (stopped on the old owner before it starts on the new one)", object, before[object], after[object], seq, want)
		}
	}
	if moved == 0 {
		t.Fatalf("no object moved to replica-c: the test proves nothing")
	}
	t.Logf("%d of %d objects moved to replica-c; their daemons stopped on the old owner before starting on the new one", moved, n)
	for _, p := range replicas {
		p.Stop(t, 30*time.Second)
	}
}
