// Package indexing tests the operator's indices on a real control plane:
// their contents follow the objects' creations, label changes and
// deletions; handlers never see a partial index at start, and an
// operator with one worker and a thousand indexed objects starts (Kopf
// deadlocks there: #1243). Handlers are registered by hand through
// kopf.Registry, as generated code would.
package indexing

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

var (
	configmaps = kopf.Selector{Version: "v1", Name: "configmaps", Core: true}
	secrets    = kopf.Selector{Version: "v1", Name: "secrets", Core: true}
)

// byLabel is Kopf's by_label of examples/16-indexing.
func byLabel(_ context.Context, kw kopf.IndexKwargs) (map[[2]string]string, error) {
	out := map[[2]string]string{}
	for k, v := range kw.Labels {
		out[[2]string{k, v}] = kw.Name
	}
	return out, nil
}

// contents renders an index as key → sorted values.
func contents(idx kopf.Index[[2]string, string]) map[[2]string][]string {
	out := map[[2]string][]string{}
	for k, s := range idx.All() {
		v := s.Values()
		slices.Sort(v)
		out[k] = v
	}
	return out
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func clientset(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func configMap(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func TestIndexFollowsObjects(t *testing.T) {
	env := envtest.Start(t)
	ctx := t.Context()
	cs := clientset(t, env.Config)
	cms := cs.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, configMap("listed", map[string]string{"app": "x"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	idx := kopf.NewIndex[[2]string, string]()
	op := kopftest.Start(t, env.Config, func(r *kopf.Registry) error {
		// Only objects with the label app are indexed: the others leave.
		return r.AddIndex(kopf.IndexHandler{ID: "by_label", Selector: configmaps, Fn: kopf.IndexFunc(idx, byLabel),
			Filter: kopf.Filter{Labels: map[string]kopf.Matcher{"app": kopf.Present()}}})
	})
	op.WaitReady(30 * time.Second)

	steps := []struct {
		what   string
		change func() error
		want   map[[2]string][]string
	}{
		{"the listing", func() error { return nil },
			map[[2]string][]string{{"app", "x"}: {"listed"}}},
		{"a creation", func() error {
			_, err := cms.Create(ctx, configMap("a", map[string]string{"app": "x", "tier": "db"}), metav1.CreateOptions{})
			return err
		}, map[[2]string][]string{{"app", "x"}: {"a", "listed"}, {"tier", "db"}: {"a"}}},
		{"a label change", func() error {
			_, err := cms.Update(ctx, configMap("a", map[string]string{"app": "y"}), metav1.UpdateOptions{})
			return err
		}, map[[2]string][]string{{"app", "x"}: {"listed"}, {"app", "y"}: {"a"}}},
		{"an object that stops matching the filter", func() error {
			_, err := cms.Update(ctx, configMap("listed", map[string]string{"other": "x"}), metav1.UpdateOptions{})
			return err
		}, map[[2]string][]string{{"app", "y"}: {"a"}}},
		{"an object that starts matching the filter", func() error {
			_, err := cms.Update(ctx, configMap("listed", map[string]string{"app": "y"}), metav1.UpdateOptions{})
			return err
		}, map[[2]string][]string{{"app", "y"}: {"a", "listed"}}},
		{"a deletion", func() error { return cms.Delete(ctx, "a", metav1.DeleteOptions{}) },
			map[[2]string][]string{{"app", "y"}: {"listed"}}},
		{"the last deletion", func() error { return cms.Delete(ctx, "listed", metav1.DeleteOptions{}) },
			map[[2]string][]string{}},
	}
	for _, step := range steps {
		if err := step.change(); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		var got map[[2]string][]string
		waitFor(t, fmt.Sprintf("the index after %s to be %v (it is %v)", step.what, step.want, got), 10*time.Second, func() bool {
			got = contents(idx)
			return maps.EqualFunc(got, step.want, slices.Equal)
		})
		if idx.Len() != len(step.want) {
			t.Errorf("after %s: Len() = %d, want %d", step.what, idx.Len(), len(step.want))
		}
	}
	if err := op.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := op.CountLog("failed with an exception"); n != 0 {
		t.Errorf("%d failures in the log:\n%s", n, op.Logs())
	}
}

// With one worker and a thousand indexed objects, the operator starts,
// and every handler, of the indexed resource and of another, sees the
// whole index from its first call on.
func TestStartWithOneWorker(t *testing.T) {
	const n = 1000
	env := envtest.Start(t)
	ctx := t.Context()
	cs := clientset(t, env.Config)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, configMap(fmt.Sprintf("cm-%04d", i), map[string]string{"set": "big"}), metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// A single value per object: the names under Kopf's None key.
	names := kopf.NewIndex[kopf.None, string]()
	var mu sync.Mutex
	seen := map[string]int{} // handler: the fewest names it saw
	calls := map[string]int{}
	saw := func(handler string) {
		s, _ := names.Get(kopf.None{})
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := seen[handler]; !ok || s.Len() < prev {
			seen[handler] = s.Len()
		}
		calls[handler]++
	}
	started := time.Now()
	op := kopftest.Start(t, env.Config, func(r *kopf.Registry) error {
		if err := r.AddIndex(kopf.IndexHandler{ID: "names", Selector: configmaps,
			Filter: kopf.Filter{Labels: map[string]kopf.Matcher{"set": kopf.Equal("big")}},
			Fn: kopf.ValueIndexFunc(names, func(_ context.Context, kw kopf.IndexKwargs) (string, bool) {
				return kw.Name, true
			})}); err != nil {
			return err
		}
		if err := r.AddEvent(kopf.EventHandler{ID: "configmaps", Selector: configmaps,
			Filter: kopf.Filter{Labels: map[string]kopf.Matcher{"set": kopf.Equal("big")}},
			Fn:     func(context.Context, *kopf.EventKwargs) error { saw("configmaps"); return nil }}); err != nil {
			return err
		}
		return r.AddEvent(kopf.EventHandler{ID: "secrets", Selector: secrets,
			Fn: func(context.Context, *kopf.EventKwargs) error { saw("secrets"); return nil }})
	}, kopf.WithSettings(func(s *kopf.Settings) { s.Queueing.WorkerLimit = 1 }))

	waitFor(t, "every object's handler to run", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return calls["configmaps"] >= n && calls["secrets"] >= 1
	})
	t.Logf("%d indexed objects, WorkerLimit 1: every handler ran within %s of the start", n, time.Since(started).Round(time.Millisecond))
	mu.Lock()
	for handler, fewest := range seen {
		if fewest != n {
			t.Errorf("handler %s saw %d indexed objects at least once, want always %d", handler, fewest, n)
		}
	}
	mu.Unlock()
	if err := op.Stop(); err != nil {
		t.Fatal(err)
	}
}
