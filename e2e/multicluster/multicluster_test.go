package multicluster

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
)

// registerCreate registers a create handler that returns, into
// status.create_fn, its kwargs' Cluster and what its client (kopf.Client,
// the cluster's) reads in the object's cluster: the ConfigMap "marker" of
// the object's namespace, made by marker.
func registerCreate(r *kopf.Registry) error {
	return r.AddChanging(kopf.ChangingHandler{ID: "create_fn", Selector: selector, Reasons: []kopf.Reason{kopf.ReasonCreate},
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
			cs, err := kopf.Client(ctx, kubernetes.NewForConfig)
			if err != nil {
				return nil, err
			}
			cm, err := cs.CoreV1().ConfigMaps(kw.Namespace).Get(ctx, "marker", metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return map[string]any{"cluster": kw.Cluster, "marker": cm.Data["cluster"], "host": kopf.RESTConfig(ctx).Host}, nil
		}})
}

// marker makes, in every cluster, the ConfigMap "marker" of ns that names
// the cluster.
func marker(t *testing.T, ns string) {
	t.Helper()
	for i, c := range fleet {
		cs, err := kubernetes.NewForConfig(c.Config)
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "marker"}, Data: map[string]string{"cluster": names[i]}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// handled waits until the object of the fleet's i-th cluster has the
// create handler's result, and checks that it was that cluster's.
func handled(t *testing.T, i int, ns, name string, timeout time.Duration) {
	t.Helper()
	var got map[string]any
	eventually(t, timeout, "the handler's result in "+names[i]+"'s "+ns+"/"+name, func(ctx context.Context) (bool, error) {
		var err error
		got, err = status(t, ctx, i, ns, name, "create_fn")
		return got != nil, err
	})
	want := map[string]any{"cluster": names[i], "marker": names[i], "host": fleet[i].Config.Host}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s's %s/%s: status.create_fn.%s = %v, want %v (all: %v)", names[i], ns, name, k, got[k], v, got)
		}
	}
}

// (a) The handlers run in each cluster, with the cluster's name in their
// kwargs and the cluster's client in their context; each object's status
// is written in its own cluster only, and each cluster's log lines carry
// its name.
func TestHandlersInEachCluster(t *testing.T) {
	ns := namespace(t, "handlers")
	marker(t, ns)
	p := newProvider(member(0), member(1), member(2))
	op := kopftest.Start(t, fleet[0].Config, registerCreate, withProvider(p), kopf.WithNamespaces(ns))
	op.WaitReady(30 * time.Second)
	for i := range fleet {
		create(t, i, ns, "same-name") // the same object in each cluster, handled in each
	}
	for i := range fleet {
		handled(t, i, ns, "same-name", 30*time.Second)
	}
	for _, name := range names {
		op.WaitLog("["+name+"] ["+ns+"/same-name] Handler 'create_fn' succeeded.", 10*time.Second)
	}
	if strings.Contains(op.Logs(), "cluster=") {
		t.Error("a cluster's name is logged as an attribute, not as the prefix")
	}
}

// (b) One cluster's API server stops: the others keep being served; once
// it is back, it is served again, its objects created meanwhile too.
func TestClusterDownAndBack(t *testing.T) {
	ns := namespace(t, "down-and-back")
	marker(t, ns)
	p := newProvider(member(0), member(1), member(2))
	op := kopftest.Start(t, fleet[0].Config, registerCreate, withProvider(p), kopf.WithNamespaces(ns))
	op.WaitReady(30 * time.Second)
	create(t, 1, ns, "before")
	handled(t, 1, ns, "before", 30*time.Second)

	down := fleet[1]
	if err := down.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = down.StartAPIServer()
		}
	})
	for _, i := range []int{0, 2} {
		create(t, i, ns, "while-down")
	}
	for _, i := range []int{0, 2} {
		handled(t, i, ns, "while-down", 30*time.Second)
	}
	if err := down.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	create(t, 1, ns, "after")
	handled(t, 1, ns, "after", 60*time.Second)
	create(t, 0, ns, "after")
	handled(t, 0, ns, "after", 30*time.Second)
}

// daemons records the daemons' starts and stops by cluster.
type daemons struct {
	mu      sync.Mutex
	started map[string]int
	stopped map[string]int
}

func (d *daemons) count(m map[string]int, cluster string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return m[cluster]
}

func (d *daemons) register(r *kopf.Registry) error {
	if err := registerCreate(r); err != nil {
		return err
	}
	return r.AddDaemon(kopf.DaemonHandler{ID: "background", Selector: selector,
		Fn: func(ctx context.Context, kw *kopf.DaemonKwargs) (any, error) {
			d.mu.Lock()
			d.started[kw.Cluster]++
			d.mu.Unlock()
			<-kw.Stopped.Done()
			d.mu.Lock()
			d.stopped[kw.Cluster]++
			d.mu.Unlock()
			return nil, nil
		}})
}

// (c) A cluster added while the operator runs is served: its handlers
// run, its daemons start; removed, its daemons have stopped by the time
// Disengage returns, and its objects are no longer handled; added again,
// it is served again. The other clusters are served all along.
func TestClusterAddedAndRemoved(t *testing.T) {
	ns := namespace(t, "added-removed")
	marker(t, ns)
	d := &daemons{started: map[string]int{}, stopped: map[string]int{}}
	p := newProvider(member(0))
	op := kopftest.Start(t, fleet[0].Config, d.register, withProvider(p), kopf.WithNamespaces(ns))
	op.WaitReady(30 * time.Second)
	create(t, 2, ns, "early") // in a cluster not served yet

	p.engage(t, member(2))
	handled(t, 2, ns, "early", 30*time.Second)
	eventually(t, 30*time.Second, "the daemon's start in north", func(context.Context) (bool, error) {
		return d.count(d.started, "north") == 1, nil // the operator serves ns only: one object
	})

	p.disengage(t, "north")
	if n := d.count(d.stopped, "north"); n != 1 {
		t.Fatalf("north's daemon has stopped %d times when Disengage returns, want 1", n)
	}
	create(t, 2, ns, "unserved")
	create(t, 0, ns, "served")
	handled(t, 0, ns, "served", 30*time.Second)
	if got, err := status(t, t.Context(), 2, ns, "unserved", "create_fn"); err != nil || got != nil {
		t.Errorf("an object of a removed cluster is handled: %v, %v", got, err)
	}
	if d.count(d.stopped, "east") != 0 {
		t.Error("east's daemon has stopped with north's")
	}

	p.engage(t, member(2))
	handled(t, 2, ns, "unserved", 30*time.Second)
	eventually(t, 30*time.Second, "the daemons' starts in north again", func(context.Context) (bool, error) {
		return d.count(d.started, "north") == 3, nil // early's again, and unserved's
	})
	if _, err := objects(t, 1, ns).Get(t.Context(), "early", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an object of north is in west: %v", err)
	}
}
