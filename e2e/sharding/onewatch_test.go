package sharding_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// In the label mode, objects of the buckets that a replica keeps are
// deleted while it replaces its watch over the buckets held (replica-b
// joins, replica-a loses buckets): each deleted object's delete handler
// runs once, its finalizer is released and it disappears, and on.event
// sees its deletion once; the objects not deleted are not reported
// deleted (no delete handler, no DELETED event). The moment of the
// replacement cannot be forced from outside: the test deletes one object
// every 25 ms from replica-b's start until 3 s after the buckets are held
// as assigned, so that deletions fall before, during and after each
// replacement of replica-a's watch (it logs how many fell while the
// buckets moved); a single run may still miss the narrow race that the
// stubs of the replaced watch's deletions cover (shardstage's setListed).
func TestLabelModeDeletionsWhileTheWatchIsReplaced(t *testing.T) {
	env := newRig(t)
	cs, ri, record := env.cs, env.ri, env.record
	a := env.replica(t, "replica-a", "--shard-mode=label")
	awaitAssignment(t, cs, []string{"replica-a"}, time.Now(), 60*time.Second)
	names := keptObjects(400, sharding.Assign(buckets, []string{"replica-a", "replica-b"}), "replica-a")
	for _, name := range names {
		if _, err := createExample(ri, name); err != nil {
			t.Fatal(err)
		}
	}
	awaitHandled(t, ri, names, "create_fn", 0, 120*time.Second)

	b := env.replica(t, "replica-b", "--shard-mode=label")
	joined := time.Now()
	var stop atomic.Bool
	deleted := make(chan []string, 1)
	go func() { deleted <- deleteUntil(ri, names, &stop) }()
	took := awaitAssignment(t, cs, []string{"replica-a", "replica-b"}, joined, 60*time.Second)
	time.AfterFunc(3*time.Second, func() { stop.Store(true) })
	gone := <-deleted
	if len(gone) == 0 || len(gone) == len(names) {
		t.Fatalf("%d of %d objects deleted: the test needs both deleted and kept ones", len(gone), len(names))
	}
	t.Logf("replica-b joined: the buckets held as assigned %s after its start; %d objects of replica-a's kept buckets deleted meanwhile and 3 s after (one per 25 ms), %d kept",
		took.Round(time.Millisecond), len(gone), len(names)-len(gone))
	awaitGone(t, ri, gone, 60*time.Second)
	err := cluster.WaitFor(context.Background(), 60*time.Second, func(context.Context) (bool, error) {
		reported := readAudit(t, record).changes("gone_fn", "gone")
		for _, name := range gone {
			if reported[namespace+"/"+name] == nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("not every deletion reached on.event: %v", err)
	}
	a.Stop(t, 30*time.Second)
	b.Stop(t, 30*time.Second)
	checkDeletions(t, ri, readAudit(t, record), names, gone, a)
}

// keptObjects returns n names "del-<i>" whose buckets (by key, as the
// label mode) are owned by owner in the assignment.
func keptObjects(n int, owners []string, owner string) []string {
	var names []string
	for i := 0; len(names) < n; i++ {
		name := fmt.Sprintf("del-%04d", i)
		if owners[sharding.KeyBucket(sharding.ObjectKey(namespace, name), buckets)] == owner {
			names = append(names, name)
		}
	}
	return names
}

// deleteUntil deletes the objects in order, one per 25 ms, until stop is
// set, and returns the names deleted.
func deleteUntil(ri dynamic.ResourceInterface, names []string, stop *atomic.Bool) []string {
	var gone []string
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for _, name := range names {
		if stop.Load() {
			break
		}
		if err := ri.Delete(context.Background(), name, metav1.DeleteOptions{}); err == nil {
			gone = append(gone, name)
		}
		<-tick.C
	}
	return gone
}

// awaitGone waits until none of the named objects exists.
func awaitGone(t *testing.T, ri dynamic.ResourceInterface, names []string, timeout time.Duration) {
	t.Helper()
	var left []string
	err := cluster.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		left = nil
		for _, name := range names {
			_, err := ri.Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				left = append(left, name)
			} else if !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		t.Fatalf("%d deleted objects still exist after %s (finalizer not released?): %v (%v)", len(left), timeout, left, err)
	}
}

// checkDeletions checks that every deleted object's delete_fn ran once,
// on replica-a (pid), and its deletion reached on.event (gone_fn) once;
// and that the objects kept exist, are not being deleted, and had neither.
func checkDeletions(t *testing.T, ri dynamic.ResourceInterface, rec audit, names, gone []string, a *proc.Process) {
	t.Helper()
	deletes, events := rec.changes("delete_fn", "0"), rec.changes("gone_fn", "gone")
	isGone := map[string]bool{}
	for _, name := range gone {
		isGone[name] = true
	}
	for _, name := range names {
		object := namespace + "/" + name
		del, ev := deletes[object], events[object]
		if !isGone[name] {
			if del != nil || ev != nil {
				t.Errorf("%s exists, yet it was reported deleted: delete_fn %+v, DELETED events %+v", object, del, ev)
			}
			obj, err := ri.Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("%s, not deleted, is gone: %v", object, err)
			} else if obj.GetDeletionTimestamp() != nil || !slices.Contains(obj.GetFinalizers(), "kopf.zalando.org/KopfFinalizerMarker") {
				t.Errorf("%s, not deleted: deletionTimestamp %v, finalizers %v", object, obj.GetDeletionTimestamp(), obj.GetFinalizers())
			}
			continue
		}
		failed := false
		if del == nil || len(del.invoked) != 1 || len(del.finished) != 1 || del.finished[0].pid != a.Pid() {
			t.Errorf("delete_fn of %s: %+v, want one run on replica-a (pid %d)", object, del, a.Pid())
			failed = true
		}
		if ev == nil || len(ev.invoked) != 1 {
			t.Errorf("the DELETED events of %s: %+v, want one", object, ev)
			failed = true
		}
		if failed {
			data, _ := os.ReadFile(a.Log)
			for _, line := range strings.Split(string(data), "\n") {
				if strings.Contains(line, "["+object+"]") {
					t.Logf("replica-a: %.300s", line)
				}
			}
		}
	}
}
