package reliability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
)

// etcd compacts its history while the operator's watch is down: objects
// are created and changed meanwhile, and the watch cannot resume from its
// resourceVersion (410 Gone: too old). The operator lists again and
// handles every creation and change made in the gap, and runs no handler
// that succeeded before the gap again.
//
// The watch goes down as in TestSilentWatch: a proxy freezes the
// operator's connections, and the inactivity timeout re-establishes the
// watch. kube-apiserver runs without its watch cache (--watch-cache=false),
// so that watches are served by etcd and etcd's compaction is the window
// of resourceVersions they can resume from; with the cache, the window is
// the cache's own, and resuming past it gets the same 410.
func TestCompaction(t *testing.T) {
	t.Parallel()
	c := startCluster(t, envtest.WithAPIServerFlag("watch-cache", "false"))
	const ns = "compaction"
	ctx := context.Background()
	if _, err := kubernetes.NewForConfigOrDie(c.Config).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ri := objects(c.Config, ns)
	host, err := url.Parse(c.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startProxy(t, host.Host)
	cfg := rest.CopyConfig(c.Config)
	cfg.Host = "https://" + proxy.Addr()

	const inactivity = 3 * time.Second
	s := fastSettings()
	s.Watching.InactivityTimeout = inactivity
	var rec calls
	op := kopftest.Start(t, cfg, register(
		handler("create_fn", rec.recording("create_fn", message("created")), causes.Create),
		handler("update_fn", rec.recording("update_fn", message("updated")), causes.Update),
	), kopf.WithNamespaces(ns), withSettings(s))

	const count = 5
	for i := range count {
		create(t, ri, example(fmt.Sprintf("before-%d", i), nil, nil, nil))
	}
	for i := range count {
		waitHandled(t, ri, fmt.Sprintf("before-%d", i), 30*time.Second, "create_fn")
	}

	// The gap: the operator sees nothing while objects are created and
	// changed, then etcd forgets all history up to now.
	proxy.Freeze()
	frozenAt := time.Now()
	for i := range count {
		create(t, ri, example(fmt.Sprintf("gap-%d", i), nil, nil, nil))
		patch := []byte(`{"spec":{"field":"changed in the gap"}}`)
		if _, err := ri.Patch(ctx, fmt.Sprintf("before-%d", i), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rev := compactEtcd(t, c)

	for i := range count {
		waitHandled(t, ri, fmt.Sprintf("gap-%d", i), inactivity+30*time.Second, "create_fn")
		waitHandled(t, ri, fmt.Sprintf("before-%d", i), inactivity+30*time.Second, "update_fn")
	}
	recovery := time.Since(frozenAt)

	for i := range count {
		for _, name := range []string{fmt.Sprintf("before-%d", i), fmt.Sprintf("gap-%d", i)} {
			if n := len(rec.of("create_fn", name)); n != 1 {
				t.Errorf("%s: create_fn ran %d times, want once", name, n)
			}
		}
		calls := rec.of("update_fn", fmt.Sprintf("before-%d", i))
		if len(calls) != 1 || !strings.Contains(calls[0].Diff, "changed in the gap") {
			t.Errorf("before-%d: update_fn invocations %+v, want one with the gap's change", i, calls)
		}
	}
	line := fmt.Sprintf("Restarting the watch-stream for kopfexamples.v1.kopf.dev in %s: its resource version has expired (410 Gone): ", ns)
	if !strings.Contains(op.Logs(), line) {
		t.Errorf("the log does not name the expired resourceVersion: %q", line)
	}
	t.Logf("compaction: etcd compacted at revision %d during a %s gap; %d objects created and %d changed in it, all handled %s after the gap began; each handler once", rev, inactivity, count, count, recovery.Round(time.Millisecond))
}

// compactEtcd compacts etcd's history up to its current revision, through
// etcd's gRPC gateway (JSON over HTTP), and returns the revision.
func compactEtcd(t *testing.T, c *cluster.Cluster) int64 {
	t.Helper()
	base := c.Envtest().ControlPlane.Etcd.URL.String()
	call := func(path string, req, resp any) {
		t.Helper()
		data, _ := json.Marshal(req)
		r, err := http.Post(base+path, "application/json", bytes.NewReader(data))
		if err != nil {
			t.Fatalf("etcd %s: %v", path, err)
		}
		defer func() { _ = r.Body.Close() }()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("etcd %s: %s", path, r.Status)
		}
		if err := json.NewDecoder(r.Body).Decode(resp); err != nil {
			t.Fatalf("etcd %s: %v", path, err)
		}
	}
	var status struct {
		Header struct {
			Revision int64 `json:"revision,string"`
		} `json:"header"`
	}
	call("/v3/kv/range", map[string]any{"key": "Lw==", "count_only": true}, &status) // "/"
	rev := status.Header.Revision
	if rev == 0 {
		t.Fatal("etcd reports no revision")
	}
	call("/v3/kv/compaction", map[string]any{"revision": fmt.Sprint(rev), "physical": true}, &map[string]any{})
	return rev
}
