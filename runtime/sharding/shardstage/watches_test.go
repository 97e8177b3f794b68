package shardstage

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/scope"
	"github.com/kopf-go/kopf/runtime/sharding"
	"github.com/kopf-go/kopf/runtime/watching"
)

// labelLane is a lane of a two-bucket stage in the label mode over a fake
// API holding objs.
func labelLane(t *testing.T, objs ...k8sruntime.Object) (*Stage, *Lane, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Plural}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "KopfExampleList"}, objs...)
	s := New(Config{Identity: "me", Buckets: 2, Mode: sharding.ModeLabel, HandoffTimeout: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return s, s.Lane(res, client.Resource(gvr), scope.Scope{}, &patcher{}), client
}

// nameIn returns a name whose key ("ns/name") falls into the bucket (of 2).
func nameIn(bucket int, prefix string) string {
	for i := 0; ; i++ {
		if name := fmt.Sprintf("%s-%d", prefix, i); sharding.KeyBucket("ns/"+name, 2) == bucket {
			return name
		}
	}
}

// watches records the watches running (each by its set of buckets) and
// delivers, as each one's first listing, the objects of its buckets in
// objects (their resourceVersions by name, in the namespace "ns") through
// admit. If hold is set, a watch that starts while another runs lists
// once hold is closed.
type watches struct {
	mu      sync.Mutex
	running [][]int
	objects map[string]string
	admit   func(watching.Event)
	hold    chan struct{}
}

func (w *watches) watch(ctx context.Context, buckets []int, listed func()) {
	w.mu.Lock()
	w.running = append(w.running, buckets)
	replaces := len(w.running) > 1
	w.mu.Unlock()
	if w.hold != nil && replaces {
		select {
		case <-w.hold:
		case <-ctx.Done():
		}
	}
	w.mu.Lock()
	var events []watching.Event
	for name, rv := range w.objects {
		if slices.Contains(buckets, sharding.KeyBucket("ns/"+name, 2)) {
			obj := object(name, nil)
			obj.SetResourceVersion(rv)
			events = append(events, watching.Event{Type: watching.Listed, Key: "ns/" + name, Object: body.Body(obj.Object), Initial: true})
		}
	}
	w.mu.Unlock()
	for _, ev := range events {
		w.admit(ev)
	}
	listed()
	<-ctx.Done()
	w.mu.Lock()
	w.running = slices.DeleteFunc(w.running, func(bs []int) bool { return slices.Equal(bs, buckets) })
	w.mu.Unlock()
}

// get says which watches run, e.g. "[[0 1]]".
func (w *watches) get() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(w.running)
}

// In the label mode, a lane that watches its buckets runs one watch over
// the set held: started at once for the buckets already held, replaced
// by one over the new set on Gain (the older stopped once it has listed)
// and on Lose; none when no bucket is held.
func TestWatchBuckets(t *testing.T) {
	s, l, _ := labelLane(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = l.Admit(func(watching.Event) {})
	s.Gain(ctx, []int{1}) // before WatchBuckets: watched once it is called
	var w watches
	l.WatchBuckets(ctx, w.watch)
	waitFor(t, func() bool { return w.get() == "[[1]]" })
	s.Gain(ctx, []int{0})
	waitFor(t, func() bool { return w.get() == "[[0 1]]" })
	s.Lose(ctx, []int{1})
	waitFor(t, func() bool { return w.get() == "[[0]]" })
	s.Lose(ctx, []int{0})
	waitFor(t, func() bool { return w.get() == "[]" })
}

// recorder records the events that reach the queue.
type recorder struct {
	mu     sync.Mutex
	events []watching.Event
}

func (r *recorder) next(ev watching.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// find returns the events of a key, in order, as "TYPE/initial".
func (r *recorder) find(key string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var got []string
	for _, ev := range r.events {
		if t := ev.Type; ev.Key == key {
			if t == watching.Listed {
				t = "LISTED"
			}
			got = append(got, fmt.Sprintf("%s/%t", t, ev.Initial))
		}
	}
	return got
}

// A watch over a set that replaces another lists the buckets held before
// too: only the gained buckets' objects carry the first-listing mark, and
// of the others only those changed since come (as listed); an older
// version, late, does not. The objects known of the buckets held before that it neither listed
// nor saw deleted (their deletion lost with the stopped watch) come as
// deleted, once; those whose deletion was admitted do not.
func TestWatchBucketsBySet(t *testing.T) {
	s, l, _ := labelLane(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kept, changed, gone, deleted, gained := nameIn(0, "kept"), nameIn(0, "changed"), nameIn(0, "gone"), nameIn(0, "deleted"), nameIn(1, "gained")
	var r recorder
	w := watches{objects: map[string]string{kept: "1", changed: "1", gone: "1", deleted: "1", gained: "1"}}
	w.admit = l.Admit(r.next)
	l.WatchBuckets(ctx, w.watch)
	s.Gain(ctx, []int{0})
	w.mu.Lock()
	delete(w.objects, gone) // its deletion not delivered by the first watch
	delete(w.objects, deleted)
	w.objects[changed] = "2" // its change not delivered by the first watch
	w.mu.Unlock()
	w.admit(watching.Event{Type: watching.Deleted, Key: "ns/" + deleted, Object: body.Body(object(deleted, nil).Object)})
	s.Gain(ctx, []int{1})
	waitFor(t, func() bool { return len(r.find("ns/"+gone)) == 2 })
	late := object(changed, nil)
	late.SetResourceVersion("1") // from the watch replaced, behind the new one
	w.admit(watching.Event{Type: watching.Modified, Key: "ns/" + changed, Object: body.Body(late.Object)})
	for _, c := range []struct{ name, want string }{
		{kept, "[LISTED/true]"},
		{changed, "[LISTED/true LISTED/false]"},
		{gone, "[LISTED/true DELETED/false]"},
		{deleted, "[LISTED/true DELETED/false]"},
		{gained, "[LISTED/true]"},
	} {
		if got := fmt.Sprint(r.find("ns/" + c.name)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// A deletion admitted while the watch replaced still runs (the new one
// lists) is remembered until both have stopped: late copies of the
// object, being deleted or deleted, are dropped, not handled again,
// whether the replaced watch brings them before it stops or the new one
// replays them after its listing; the deletion's version is forgotten at
// the next replacement.
func TestWatchBucketsBySetDropsLateCopiesOfADeletion(t *testing.T) {
	s, l, _ := labelLane(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	victim := nameIn(0, "victim")
	var r recorder
	w := watches{objects: map[string]string{victim: "1"}, hold: make(chan struct{})}
	w.admit = l.Admit(r.next)
	l.WatchBuckets(ctx, w.watch)
	s.Gain(ctx, []int{0})
	gained := make(chan struct{})
	go func() {
		defer close(gained)
		s.Gain(ctx, []int{1})
	}()
	waitFor(t, func() bool { return w.get() == "[[0] [0 1]]" })
	being := object(victim, nil)
	being.SetResourceVersion("3")
	being.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	deleted := being.DeepCopy()
	deleted.SetResourceVersion("4")
	deletion := func() {
		w.admit(watching.Event{Type: watching.Modified, Key: "ns/" + victim, Object: body.Body(being.Object)})
		w.admit(watching.Event{Type: watching.Deleted, Key: "ns/" + victim, Object: body.Body(deleted.Object)})
	}
	deletion() // from the one watch
	deletion() // late from the other
	w.mu.Lock()
	delete(w.objects, victim)
	w.mu.Unlock()
	close(w.hold)
	<-gained
	deletion() // replayed by the new watch after its listing
	if got, want := fmt.Sprint(r.find("ns/"+victim)), "[LISTED/true MODIFIED/false DELETED/false]"; got != want {
		t.Errorf("events: %s, want %s", got, want)
	}
	forgotten := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(l.versions) == 0 && len(l.gone) == 0
	}
	if forgotten() {
		t.Errorf("the deletion is forgotten while the watch that may replay it runs")
	}
	s.Lose(ctx, []int{1})
	waitFor(t, forgotten)
}

// In the label mode, the bucket of an object is by its key, also for the
// stub of a vanished one.
func TestLabelModeAdmitsByKey(t *testing.T) {
	s, l, _ := labelLane(t)
	var got []string
	admit := l.Admit(func(ev watching.Event) { got = append(got, ev.Key) })
	s.Gain(context.Background(), []int{0})
	in, out := nameIn(0, "in"), nameIn(1, "out")
	admit(watching.Event{Type: watching.Deleted, Key: "ns/" + in, Object: body.Body{"metadata": map[string]any{"namespace": "ns", "name": in}}})
	admit(watching.Event{Type: watching.Deleted, Key: "ns/" + out, Object: body.Body{"metadata": map[string]any{"namespace": "ns", "name": out}}})
	if fmt.Sprint(got) != "[ns/"+in+"]" {
		t.Errorf("admitted %v, want [ns/%s]", got, in)
	}
}

func object(name string, labels map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"namespace": "ns", "name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": meta}}
}

// The labeller labels the unlabelled objects of the buckets held, those of
// other buckets once gained, and relabels an object whose label is wrong.
func TestLabeller(t *testing.T) {
	mine, later, wrong := nameIn(0, "mine"), nameIn(1, "later"), nameIn(0, "wrong")
	key := sharding.LabelKey(2)
	s, l, client := labelLane(t, object(mine, nil), object(later, nil), object(wrong, map[string]any{key: "1"}))
	gvr := schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Plural}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admit := l.Admit(func(watching.Event) {})
	l.WatchBuckets(ctx, (&watches{admit: admit}).watch)
	s.Gain(ctx, []int{0})
	label := func(name string) string {
		obj, err := client.Resource(gvr).Namespace("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.GetLabels()[key]
	}
	for _, name := range []string{mine, later} {
		l.Unlabelled(watching.Event{Type: watching.Added, Key: "ns/" + name, Object: body.Body(object(name, nil).Object)})
	}
	waitFor(t, func() bool { return label(mine) == "0" })
	if got := label(later); got != "" {
		t.Errorf("%s, of a bucket not held, is labelled %q", later, got)
	}
	s.Gain(ctx, []int{1})
	waitFor(t, func() bool { return label(later) == "1" })
	admit(watching.Event{Type: watching.Added, Key: "ns/" + wrong, Object: body.Body(object(wrong, map[string]any{key: "1"}).Object)})
	waitFor(t, func() bool { return label(wrong) == "0" })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// In the server mode, Gain starts the gained buckets' watches (one per
// bucket), but at most listingsAtOnce of
// them are in their first listing at once; a watch that stops without
// listing frees its slot too.
func TestWatchBucketsListsAFewAtOnce(t *testing.T) {
	const buckets = 3*listingsAtOnce + 1
	gvr := schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Plural}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "KopfExampleList"})
	s := New(Config{Identity: "me", Buckets: buckets, Mode: sharding.ModeServer, HandoffTimeout: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	l := s.Lane(res, client.Resource(gvr), scope.Scope{}, &patcher{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = l.Admit(func(watching.Event) {})
	var mu sync.Mutex
	listing, most, listed := 0, 0, 0
	zero := make(chan struct{}) // closed once bucket 0's watch runs
	l.WatchBuckets(ctx, func(ctx context.Context, set []int, done func()) {
		bucket := set[0]
		mu.Lock()
		listing++
		most = max(most, listing)
		mu.Unlock()
		if bucket == 0 {
			close(zero)
			<-ctx.Done() // never lists: stopped by Lose
			mu.Lock()
			listing--
			mu.Unlock()
			return
		}
		time.Sleep(time.Millisecond) // a listing takes a while, so that more would overlap
		mu.Lock()
		listing--
		listed++
		mu.Unlock()
		done()
		<-ctx.Done()
	})
	all := make([]int, buckets)
	for b := range all {
		all[b] = b
	}
	go func() {
		<-zero
		s.Lose(ctx, []int{0}) // Gain awaits every listing, or bucket 0's stop
	}()
	s.Gain(ctx, all)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return listed == buckets-1 })
	if most > listingsAtOnce {
		t.Errorf("%d watches were listing at once, want at most %d", most, listingsAtOnce)
	}
}
