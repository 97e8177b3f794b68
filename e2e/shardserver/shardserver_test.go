// Package shardserver tests sharded watches on a real API server with
// Kubernetes' sharded list and watch (KEP-5866, alpha in 1.36): a
// kube-apiserver 1.36 started with the ShardedListAndWatch feature gate
// (this package's TestMain; `make controlplane` builds it into
// bin/k8s/<version>-<os>-<arch>, or $KOPF_SHARDED_ASSETS names the
// directory: cluster.ShardedAssetsDir), and the ordinary 1.35 one, which ignores the shard selector.
//
// It proves that kopf-go's buckets are the API server's: a watcher whose
// ShardSelector is sharding.ShardSelector of some buckets lists and
// watches exactly the objects that sharding.Bucket puts into them (so our
// FNV-1a hash and range bounds are the server's), and knows it
// (Status.Sharded); on an API server without the feature it gets every
// object, and the operator's own filter (shardstage's Lane) still admits
// only its buckets'.
package shardserver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/scope"
	"github.com/kopf-go/kopf/runtime/sharding"
	"github.com/kopf-go/kopf/runtime/sharding/shardstage"
	"github.com/kopf-go/kopf/runtime/watching"
)

// The buckets of the tests' replica: runs of adjacent buckets (one range
// each in the selector) and the last bucket (its range ends at 2^64).
const buckets = 16

var mine = []int{1, 2, 3, 8, 13, 15}

var (
	// sharded is the control plane of kube-apiserver shardedVersion with
	// the gate on, or nil if its binaries are missing (then missing says
	// why).
	sharded *cluster.Cluster
	missing error
)

func TestMain(m *testing.M) {
	dir, err := cluster.ShardedAssetsDir()
	if err != nil {
		missing = err
		os.Exit(m.Run())
	}
	os.Exit(cluster.Main(m, func(c *cluster.Cluster) error { sharded = c; return nil }, cluster.ShardedOptions(dir)...))
}

// needSharded is the shared control plane of kube-apiserver 1.36, or
// the end of the test without it (cluster.NeedSharded).
func needSharded(t *testing.T) *cluster.Cluster {
	t.Helper()
	if missing != nil {
		cluster.NeedSharded(t, missing)
	}
	return sharded
}

func TestMakefileBuildsTheShardedVersion(t *testing.T) {
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^K8S_SHARDED_VERSION\s*:=\s*(\S+)$`).FindSubmatch(makefile)
	if m == nil || string(m[1]) != cluster.ShardedKubernetesVersion {
		t.Errorf("the Makefile's K8S_SHARDED_VERSION is %q, e2e/cluster's %s", m, cluster.ShardedKubernetesVersion)
	}
}

// On kube-apiserver 1.36 with the gate, the watcher with a shard selector
// lists and then watches exactly the objects of its buckets, as
// sharding.Bucket computes them from the uids the API server assigned,
// and knows that the server applied its selector.
func TestServerAppliesTheShardSelector(t *testing.T) {
	c := needSharded(t)
	ns := newNamespace(t, c.Config, "sharded")
	uids := createConfigMaps(t, c.Config, ns, "before", 50)
	r := startReplica(t, c.Config, ns)

	listed := r.await(t, "the listing", ours(uids))
	if all := r.received(); !slices.Equal(all, listed) {
		t.Errorf("the watch received %d objects, its buckets' are %d: %v", len(all), len(listed), all)
	}
	s := r.watcher.Status()
	if !s.Sharded {
		t.Errorf("the watcher does not know that the API server applied its selector: %+v", s)
	}
	if !strings.Contains(r.logged(), "The API server applies the shard selector of the watch of configmaps: it sends only the objects of "+sharding.ShardSelector(mine, buckets)+".") {
		t.Errorf("logged:\n%s", r.logged())
	}
	t.Logf("%d of %d objects listed, selector %s", len(listed), len(uids), sharding.ShardSelector(mine, buckets))

	// The watch: objects created until the last is one of ours; the watch
	// delivers in order, so once that one is here, any other of the
	// others' that it would send is too.
	more := createUntilOurs(t, c.Config, ns)
	for k, v := range more {
		uids[k] = v
	}
	want := ours(uids)
	r.await(t, "the watch's events", want)
	if all := r.received(); !slices.Equal(all, want) {
		t.Errorf("the watch received %v, its buckets' are %v", all, want)
	}
	if admitted := r.admitted(); !slices.Equal(admitted, want) {
		t.Errorf("the lane admitted %v, want %v", admitted, want)
	}
}

// On kube-apiserver 1.35 (no sharded list and watch), the same watcher
// gets every object and knows it; the operator's own filter still admits
// only its buckets' objects.
func TestUnshardedServerSendsEverything(t *testing.T) {
	c := cluster.Start(t)
	ns := newNamespace(t, c.Config, "unsharded")
	uids := createConfigMaps(t, c.Config, ns, "before", 50)
	r := startReplica(t, c.Config, ns)

	all := r.await(t, "the listing", keys(uids))
	if s := r.watcher.Status(); s.Sharded {
		t.Errorf("the watcher believes the API server applied its selector: %+v", s)
	}
	if !strings.Contains(r.logged(), "The API server ignored the shard selector of the watch of configmaps") {
		t.Errorf("logged:\n%s", r.logged())
	}
	r.awaitAdmitted(t, ours(uids))
	t.Logf("%d objects listed, %d admitted", len(all), len(ours(uids)))
}

// ours returns the keys of the objects in the replica's buckets, sorted.
func ours(uids map[string]string) []string {
	var out []string
	for key, uid := range uids {
		if slices.Contains(mine, sharding.Bucket(uid, buckets)) {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

func keys(uids map[string]string) []string {
	out := make([]string, 0, len(uids))
	for key := range uids {
		out = append(out, key)
	}
	slices.Sort(out)
	return out
}

func newNamespace(t *testing.T, cfg *rest.Config, name string) string {
	t.Helper()
	_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// createConfigMaps creates n ConfigMaps and returns their uids by key.
func createConfigMaps(t *testing.T, cfg *rest.Config, ns, prefix string, n int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i := range n {
		key, uid := createConfigMap(t, cfg, ns, fmt.Sprintf("%s-%02d", prefix, i))
		out[key] = uid
	}
	return out
}

func createConfigMap(t *testing.T, cfg *rest.Config, ns, name string) (key, uid string) {
	t.Helper()
	cm, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns).Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns + "/" + name, string(cm.UID)
}

// createUntilOurs creates ConfigMaps until one falls into the replica's
// buckets (at least 10), and returns them all.
func createUntilOurs(t *testing.T, cfg *rest.Config, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i := 0; ; i++ {
		key, uid := createConfigMap(t, cfg, ns, fmt.Sprintf("after-%02d", i))
		out[key] = uid
		if i >= 9 && slices.Contains(mine, sharding.Bucket(uid, buckets)) {
			return out
		}
	}
}

// replica is a sharded replica's watch of ConfigMaps as the operator runs
// it: the watcher with its buckets' shard selector, the shard stage's
// lane behind it.
type replica struct {
	watcher *watching.Watcher
	mu      sync.Mutex
	seen    map[string]bool // every object the watch delivered
	passed  map[string]bool // those the lane admitted
	log     bytes.Buffer
}

// startReplica runs a replica in namespace ns until the test ends.
func startReplica(t *testing.T, cfg *rest.Config, ns string) *replica {
	t.Helper()
	r := &replica{seen: map[string]bool{}, passed: map[string]bool{}}
	logger := slog.New(slog.NewTextHandler(lockedWriter{r}, nil))
	rc, dc := clients(t, cfg)
	res := resources.Resource{Version: "v1", Plural: "configmaps", Kind: "ConfigMap", Namespaced: true}
	sc, err := scope.Parse([]string{ns})
	if err != nil {
		t.Fatal(err)
	}
	stage := shardstage.New(shardstage.Config{Identity: "replica", Buckets: buckets, HandoffTimeout: 30 * time.Second, Logger: logger})
	lane := stage.Lane(res, dc.Resource(schema.GroupVersionResource{Version: res.Version, Resource: res.Plural}), sc, nil)
	admit := lane.Admit(func(ev watching.Event) { r.mark(r.passed, ev.Key) })
	ctx, cancel := context.WithCancel(context.Background())
	stage.Gain(ctx, mine)
	r.watcher = &watching.Watcher{
		REST: rc, Path: res.Path(ns), Name: "configmaps", Logger: logger,
		ShardSelector: sharding.ShardSelector(mine, buckets),
		Callback: func(ev watching.Event) {
			r.mark(r.seen, ev.Key)
			admit(ev)
		},
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.watcher.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return r
}

func (r *replica) mark(set map[string]bool, key string) {
	r.mu.Lock()
	set[key] = true
	r.mu.Unlock()
}

func (r *replica) sorted(set map[string]bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// received is every object the watch delivered so far, sorted.
func (r *replica) received() []string { return r.sorted(r.seen) }

// admitted is every object the lane admitted so far, sorted.
func (r *replica) admitted() []string { return r.sorted(r.passed) }

func (r *replica) logged() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

// await waits until the watch has delivered every object of want, and
// returns what it delivered.
func (r *replica) await(t *testing.T, what string, want []string) []string {
	t.Helper()
	return r.awaitSet(t, what, r.received, want)
}

func (r *replica) awaitAdmitted(t *testing.T, want []string) {
	t.Helper()
	if got := r.awaitSet(t, "the lane's admissions", r.admitted, want); !slices.Equal(got, want) {
		t.Errorf("the lane admitted %v, want %v", got, want)
	}
}

func (r *replica) awaitSet(t *testing.T, what string, get func() []string, want []string) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := get()
		missing := 0
		for _, k := range want {
			if !slices.Contains(got, k) {
				missing++
			}
		}
		if missing == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d objects missing after 60 s; got %v; status %+v", what, missing, len(want), got, r.watcher.Status())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type lockedWriter struct{ r *replica }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	return w.r.log.Write(p)
}

// clients are the operator's REST client (runtime/operator/clients.go:
// JSON, unversioned, at /) and a dynamic client.
func clients(t *testing.T, cfg *rest.Config) (rest.Interface, *dynamic.DynamicClient) {
	t.Helper()
	raw := dynamic.ConfigFor(cfg)
	raw.GroupVersion = nil
	raw.APIPath = "/"
	rc, err := rest.UnversionedRESTClientFor(raw)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rc, dc
}
