// Package partition tests what a replica does when its connection to the
// API server fails while its Lease is still valid, on a real control
// plane: a loopback proxy (e2e/internal/faultproxy) between one replica
// and the API server stalls its connections, for the HA pair of peering
// (docs/peering.md) and for three sharded replicas (docs/sharding.md),
// and adds latency for the slowness test. The replicas are processes of
// ./internal/partop, which records every handler's start and end with
// its time; the tests check from that record that the cut replica stops
// handling before another replica takes its objects over, that no object
// is handled by two replicas at once, that nothing that succeeded runs
// again, and that the cut replica rejoins once the proxy passes again.
package partition

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/faultproxy"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/envtest"
)

var (
	examples   = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	peerings   = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfpeerings"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// shared is the control plane, with the KopfExample and peering CRDs.
var shared *cluster.Cluster

// partop is ./internal/partop, built once per test run.
var partop = &proc.Binary{Pkg: "./internal/partop"}

func TestMain(m *testing.M) {
	flag.Parse()
	code := cluster.Main(m, func(c *cluster.Cluster) error {
		shared = c
		return applyCRDs(c.Config)
	})
	_ = partop.Remove()
	os.Exit(code)
}

// applyCRDs applies examples/crd.yaml and the CRDs of examples/peering.yaml.
func applyCRDs(cfg *rest.Config) error {
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	docs := [][]byte{}
	for _, name := range []string{"crd.yaml", "peering.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "examples", name))
		if err != nil {
			return err
		}
		for doc := range strings.SplitSeq(string(data), "\n---") {
			if strings.Contains(doc, "kind: CustomResourceDefinition") {
				docs = append(docs, []byte(doc))
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = envtest.Apply(ctx, cfg, bytes.Join(docs, []byte("\n---\n")))
	return err
}

func client(t *testing.T) *dynamic.DynamicClient {
	t.Helper()
	dyn, err := dynamic.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// newNamespace creates a namespace of the test's own.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"generateName": prefix + "-"}}}
	got, err := client(t).Resource(namespaces).Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got.GetName()
}

// newPeering creates the KopfPeering name in ns.
func newPeering(t *testing.T, ns, name string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfPeering", "metadata": map[string]any{"name": name, "namespace": ns}}}
	if _, err := client(t).Resource(peerings).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// startProxy starts a proxy to the API server, closed with the test.
func startProxy(t *testing.T) *faultproxy.Proxy {
	t.Helper()
	u, err := url.Parse(shared.Config.Host) // https://127.0.0.1:port/
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// kubeconfig writes the admin kubeconfig into dir/name; with a proxy, its
// server is the proxy's address.
func kubeconfig(t *testing.T, dir, name string, p *faultproxy.Proxy) string {
	t.Helper()
	path := shared.Kubeconfig(t, t.TempDir())
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if p != nil {
		for _, c := range cfg.Clusters {
			c.Server = "https://" + p.Addr()
		}
	}
	out := filepath.Join(dir, name)
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// startReplica starts partop as the replica id, its log in dir.
func startReplica(t *testing.T, dir, id, kubeconfig, record string, env []string, args ...string) *proc.Process {
	t.Helper()
	base := []string{"PARTOP_RECORD=" + record, "PARTOP_IDENTITY=" + id}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "POD_ID=") && !strings.HasPrefix(kv, "POD_NAMESPACE=") && !strings.HasPrefix(kv, "KOPF_") {
			base = append(base, kv)
		}
	}
	return proc.Start(t, partop.Path(t), proc.Options{
		Name: id,
		Log:  filepath.Join(dir, id+".log"),
		Env:  append(base, env...),
		Args: append([]string{"run", "-v", "--kubeconfig", kubeconfig}, args...),
	})
}

// example is a KopfExample of a wave.
func example(name string, wave int) map[string]any {
	return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": map[string]any{"name": name}, "spec": map[string]any{"wave": wave}}
}

// step is one line of the record: a handler's start or end on a replica.
type step struct {
	event, handler, object, wave string
	pid                          int
	at                           time.Time
}

// record is every step of every replica, in the order written.
type record []step

func readRecord(t *testing.T, path string) record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var r record
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 6 {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimPrefix(f[4], "pid="))
		ns, _ := strconv.ParseInt(strings.TrimPrefix(f[5], "t="), 10, 64)
		r = append(r, step{event: f[0], handler: f[1], object: f[2], wave: strings.TrimPrefix(f[3], "wave="), pid: pid, at: time.Unix(0, ns)})
	}
	return r
}

// finished says whether every object's handler for its wave (create_fn
// of a wave, or update_fn of a wave) has finished somewhere.
func (r record) finished(handler string, objects []string, wave int) bool {
	done := map[string]bool{}
	for _, s := range r {
		if s.event == "finished" && s.handler == handler && s.wave == strconv.Itoa(wave) {
			done[s.object] = true
		}
	}
	for _, o := range objects {
		if !done[o] {
			return false
		}
	}
	return true
}

// run is one invocation of a handler, from its start to its end (the
// zero time if it has none: its replica died or was cut).
type run struct {
	handler, object, wave string
	pid                   int
	from, to              time.Time
	ended                 string // finished, cancelled, or ""
}

func (r record) runs() []run {
	var out []run
	open := map[string]int{} // handler object pid → index in out
	for _, s := range r {
		key := fmt.Sprintf("%s %s %d", s.handler, s.object, s.pid)
		if s.event == "invoked" {
			open[key] = len(out)
			out = append(out, run{handler: s.handler, object: s.object, wave: s.wave, pid: s.pid, from: s.at})
			continue
		}
		if i, ok := open[key]; ok {
			out[i].to, out[i].ended = s.at, s.event
			delete(open, key)
		}
	}
	return out
}

// audit checks the runs: no object handled by two replicas at once (a
// run without an end lasts to the end of the test), and no handler of a
// change run again after it finished, unless the run that finished did
// so on the cut replica (pid cut) at or after the cut less a second (its
// outcome could not be stored: a patch sent then was stalled). It returns
// the re-runs it allowed.
func (r record) audit(t *testing.T, cut int, cutAt time.Time) int {
	t.Helper()
	byChange := map[string][]run{}
	for _, x := range r.runs() {
		key := x.handler + " " + x.object + " " + x.wave
		byChange[key] = append(byChange[key], x)
	}
	allowed := 0
	for key, runs := range byChange {
		slices.SortFunc(runs, func(a, b run) int { return a.from.Compare(b.from) })
		for i := 1; i < len(runs); i++ {
			prev, next := runs[i-1], runs[i]
			if prev.pid != next.pid && (prev.to.IsZero() || prev.to.After(next.from)) {
				t.Errorf("%s: handled by pids %d and %d at once (%s–%s and from %s)", key, prev.pid, next.pid, clock(prev.from), clock(prev.to), clock(next.from))
			}
			if prev.ended == "finished" {
				if prev.pid != cut || prev.to.Before(cutAt.Add(-time.Second)) {
					t.Errorf("%s: ran again on pid %d at %s after it finished on pid %d at %s", key, next.pid, clock(next.from), prev.pid, clock(prev.to))
				} else {
					allowed++
				}
			}
		}
	}
	return allowed
}

func clock(t time.Time) string {
	if t.IsZero() {
		return "(no end)"
	}
	return t.Format("15:04:05.000")
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Now()
}

// names are the objects prefix-00 … prefix-(n-1) in ns, as the record
// names them.
func names(ns, prefix string, n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = fmt.Sprintf("%s/%s-%02d", ns, prefix, i)
	}
	return out
}
