package shardstage

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/scope"
	"github.com/kopf-go/kopf/runtime/sharding"
	"github.com/kopf-go/kopf/runtime/watching"
)

var res = resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}

// patcher records the patches sent (the stamps) and answers with the
// next resourceVersion.
type patcher struct {
	mu   sync.Mutex
	sent []string
}

func (p *patcher) Patch(_ context.Context, namespace, name string, _ types.PatchType, data []byte, _ ...string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, namespace+"/"+name+" "+string(data))
	return fmt.Sprint(100 + len(p.sent)), nil
}

// newLane is a lane of a two-bucket stage over an empty fake API.
func newLane(t *testing.T, p sharding.Patcher) (*Stage, *Lane) {
	t.Helper()
	s, l, _ := newLaneOver(t, p)
	return s, l
}

// newLaneOver is newLane with its fake API, whose reactors a test may
// prepend.
func newLaneOver(t *testing.T, p sharding.Patcher) (*Stage, *Lane, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Plural}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "KopfExampleList"})
	s := New(Config{Identity: "me", Buckets: 2, HandoffTimeout: 30 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return s, s.Lane(res, client.Resource(gvr), scope.Scope{}, p), client
}

// uidIn returns a uid that falls into the bucket (of 2).
func uidIn(bucket int) string {
	for i := 0; ; i++ {
		if uid := fmt.Sprintf("uid-%d", i); sharding.Bucket(uid, 2) == bucket {
			return uid
		}
	}
}

func event(name string, bucket int) watching.Event {
	return watching.Event{Type: watching.Modified, Key: "ns/" + name, Object: body.Body{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"namespace": "ns", "name": name, "uid": uidIn(bucket), "resourceVersion": "7"},
	}}
}

// Admit passes on the events of the owned buckets' objects only, from
// the Gain of their bucket until its Lose.
func TestAdmitOwnedOnly(t *testing.T) {
	s, l := newLane(t, &patcher{})
	var got []string
	admit := l.Admit(func(ev watching.Event) { got = append(got, ev.Key) })
	steps := []struct {
		do   func()
		want []string
	}{
		{func() {}, nil},
		{func() { s.Gain(context.Background(), []int{0}) }, []string{"ns/a"}},
		{func() { s.Gain(context.Background(), []int{1}) }, []string{"ns/a", "ns/b"}},
		{func() { s.Lose(context.Background(), []int{0}) }, []string{"ns/b"}},
	}
	for i, step := range steps {
		step.do()
		got = nil
		admit(event("a", 0))
		admit(event("b", 1))
		if fmt.Sprint(got) != fmt.Sprint(step.want) {
			t.Errorf("step %d: admitted %v, want %v", i, got, step.want)
		}
	}
}

// An object of a gained bucket whose watch event comes while the bucket
// is being listed is delivered with the listing's mark (Initial), as its
// listed copy would have been, so that it is resumed as after a start;
// the events of a bucket owned before are not marked.
func TestGainMarksFirstSight(t *testing.T) {
	s, l, client := newLaneOver(t, &patcher{})
	var got []string
	admit := l.Admit(func(ev watching.Event) { got = append(got, fmt.Sprintf("%s:%v", ev.Key, ev.Initial)) })
	s.Gain(context.Background(), []int{0})
	client.PrependReactor("list", "*", func(clienttesting.Action) (bool, k8sruntime.Object, error) {
		admit(event("a", 0)) // an object of the bucket owned before
		admit(event("b", 1)) // of the bucket being gained: its first sight
		admit(event("b", 1)) // and its next event
		return false, nil, nil
	})
	s.Gain(context.Background(), []int{1})
	admit(event("b", 1)) // after the gain
	want := "[ns/a:false ns/b:true ns/b:false ns/b:false]"
	if fmt.Sprint(got) != want {
		t.Errorf("admitted %v, want %s (key:Initial)", got, want)
	}
}

// Process stamps an object not yet stamped by this replica before the
// reactor's processing, and skips an object not owned.
func TestProcessStampsFirst(t *testing.T) {
	p := &patcher{}
	s, l := newLane(t, p)
	_ = l.Admit(func(watching.Event) {})
	s.Gain(context.Background(), []int{0})
	var processed []string
	process := l.Process(func(_ context.Context, ev watching.Event, _ *queueing.Stream) { processed = append(processed, ev.Key) })
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		mux := queueing.New(ctx, queueing.Options{}, process)
		mux.Put(event("a", 0))
		mux.Put(event("b", 1))
		synctest.Wait()
		mux.Close()
		mux.Wait()
	})
	if fmt.Sprint(processed) != "[ns/a]" {
		t.Errorf("processed %v, want [ns/a]", processed)
	}
	if want := `[ns/a {"metadata":{"annotations":{"kopf.zalando.org/shard-owner":"me"}}}]`; fmt.Sprint(p.sent) != want {
		t.Errorf("sent %v, want %s", p.sent, want)
	}
}

// Lose returns once the lost objects' cycles in progress are done, or
// abandons them (cancels their contexts) after the hand-off timeout, or
// once its own context is done (the replica's Lease about to expire).
func TestLoseAwaitsOrAbandons(t *testing.T) {
	tests := []struct {
		name      string
		finishIn  time.Duration // 0: the cycle runs until cancelled
		cancelIn  time.Duration // 0: Lose's context is not cancelled
		abandoned bool
		took      time.Duration
	}{
		{"the cycle finishes", 2 * time.Second, 0, false, 2 * time.Second},
		{"the cycle is abandoned", 0, 0, true, 30 * time.Second},
		{"the lease is about to expire", 0, time.Second, true, time.Second},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			s, l := newLane(t, &patcher{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mux *queueing.Queue
			abandoned := false
			process := l.Process(func(ctx context.Context, ev watching.Event, _ *queueing.Stream) {
				if ev.Wakeup {
					return
				}
				timer := make(<-chan time.Time)
				if tt.finishIn > 0 {
					timer = time.After(tt.finishIn)
				}
				select {
				case <-timer:
				case <-ctx.Done():
					abandoned = true
				}
			})
			mux = queueing.New(ctx, queueing.Options{}, process)
			admit := l.Admit(mux.Put)
			s.Gain(ctx, []int{0})
			ev := event("a", 0)
			ev.Object["metadata"].(map[string]any)["annotations"] = map[string]any{sharding.DefaultAnnotation: "me"}
			admit(ev)
			synctest.Wait() // the cycle is in progress
			start := time.Now()
			loseCtx := ctx
			if tt.cancelIn > 0 {
				var cancelLose context.CancelFunc
				loseCtx, cancelLose = context.WithCancel(ctx)
				time.AfterFunc(tt.cancelIn, cancelLose)
			}
			s.Lose(loseCtx, []int{0})
			took := time.Since(start)
			synctest.Wait() // an abandoned cycle returns
			// Lose polls every 10 ms: it returns on the tick that sees the
			// cycle done.
			if took < tt.took || took > tt.took+10*time.Millisecond || abandoned != tt.abandoned {
				t.Errorf("%s: Lose took %s, abandoned: %v; want %s, %v", tt.name, took, abandoned, tt.took, tt.abandoned)
			}
			mux.Close()
			mux.Wait()
		})
	}
}
