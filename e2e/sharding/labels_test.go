package sharding_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// requestsPolicy makes the API server log every request to KopfExamples
// when it is received, with its URI and User-Agent.
const requestsPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["ResponseStarted", "ResponseComplete", "Panic"]
rules:
  - level: Metadata
    resources: [{group: kopf.dev, resources: [kopfexamples]}]
  - level: None
`

// request is one request of a replica to KopfExamples, from the audit log.
type request struct {
	replica string // from the User-Agent: "kopf-go/<version> (<binary>)", the binary named after the replica
	verb    string
	query   url.Values
	at      time.Time
}

// readRequests reads the replicas' requests from the audit log.
func readRequests(t *testing.T, path string) []request {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			RequestURI          string    `json:"requestURI"`
			Verb                string    `json:"verb"`
			UserAgent           string    `json:"userAgent"`
			RequestReceivedTime time.Time `json:"requestReceivedTimestamp"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		i := strings.LastIndex(ev.UserAgent, " (")
		if i < 0 {
			continue
		}
		ua := ev.UserAgent[i+2:]
		if !strings.HasPrefix(ua, "replica-") {
			continue
		}
		u, err := url.Parse(ev.RequestURI)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, request{replica: strings.TrimSuffix(ua, ")"), verb: ev.Verb, query: u.Query(), at: ev.RequestReceivedTime})
	}
	return out
}

// Three replicas in the label mode: every listing and watch of each
// carries its buckets' label selector (or the labeller's "!key"); the
// objects created before and while they run are labelled and handled
// once, each by its bucket's owner; killing a replica and adding one move
// buckets, whose objects' changes are handled once by their new owners;
// a bucket label removed by hand is written again, without a handler run.
func TestLabelMode(t *testing.T) {
	dir := t.TempDir()
	bin := proc.Build(t, "./internal/shardop", dir)
	policy, audit := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(requestsPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	c := cluster.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")),
		envtest.WithAPIServerFlag("audit-policy-file", policy), envtest.WithAPIServerFlag("audit-log-path", audit))
	kubeconfig := c.Kubeconfig(t, dir)
	record := filepath.Join(dir, "record")
	cs := kubernetes.NewForConfigOrDie(c.Config)
	ri := dynamic.NewForConfigOrDie(c.Config).Resource(kopfexamples).Namespace(namespace)
	key := sharding.LabelKey(buckets)
	const before, during = 30, 30

	create := func(name string) {
		t.Helper()
		if _, err := createExample(ri, name); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for i := range before {
		names = append(names, fmt.Sprintf("before-%02d", i))
		create(names[len(names)-1])
	}
	start := func(id string) *proc.Process {
		link := filepath.Join(dir, id) // the binary's name is in the User-Agent
		if err := os.Symlink(bin, link); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		return startReplica(t, link, kubeconfig, record, dir, id, "--shard-mode=label")
	}
	replicas := map[string]*proc.Process{}
	members := []string{"replica-1", "replica-2", "replica-3"}
	for _, id := range members {
		replicas[id] = start(id)
	}
	begun := time.Now()
	took := awaitAssignment(t, cs, members, begun, 60*time.Second)
	t.Logf("3 replicas in the label mode hold their buckets %s after their start", took.Round(time.Millisecond))
	for i := range during {
		names = append(names, fmt.Sprintf("during-%02d", i))
		create(names[len(names)-1])
	}
	awaitHandled(t, ri, names, "create_fn", 0, 60*time.Second)
	t.Logf("%d objects created before the replicas and %d while they run: labelled and handled %s after the start", before, during, time.Since(begun).Round(time.Millisecond))
	checkLabels(t, ri, key)
	// The objects created before the replicas may be handled while the
	// buckets are first claimed, by a replica that held their bucket then
	// and gave it up once the others joined (it stops its cycles before
	// it releases a bucket): each runs once, on some replica. The objects
	// created after the assignment settled run on their owner.
	checkOnce(t, record, names[:before], "create_fn", "0", replicas, nil)
	checkOnce(t, record, names[before:], "create_fn", "0", replicas, members)

	// A bucket label removed by hand: written again, no handler runs,
	// the object is not taken for deleted.
	victim := names[0]
	if _, err := ri.Patch(context.Background(), victim, types.JSONPatchType, fmt.Appendf(nil, `[{"op":"remove","path":"/metadata/labels/%s"}]`, strings.ReplaceAll(key, "/", "~1")), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err := cluster.WaitFor(context.Background(), 20*time.Second, func(ctx context.Context) (bool, error) {
		got, err := ri.Get(ctx, victim, metav1.GetOptions{})
		return err == nil && got.GetLabels()[key] != "", err
	})
	if err != nil {
		t.Fatalf("the label removed from %s is not written again: %v", victim, err)
	}

	// A replica killed: its buckets move to the others; every object's
	// change is handled once, by its bucket's owner.
	if err := replicas["replica-1"].Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-replicas["replica-1"].Done()
	killedAt := time.Now()
	members = []string{"replica-2", "replica-3"}
	took = awaitAssignment(t, cs, members, killedAt, 60*time.Second)
	t.Logf("replica-1 killed: its buckets are held by the others %s after the kill", took.Round(time.Millisecond))
	wave(t, ri, names, 1)
	awaitHandled(t, ri, names, "update_fn", 1, 60*time.Second)
	checkOnce(t, record, names, "update_fn", "1", replicas, members)

	// A replica added: buckets move to it; the changes of their objects
	// are handled once, by the new owner.
	replicas["replica-4"] = start("replica-4")
	members = []string{"replica-2", "replica-3", "replica-4"}
	took = awaitAssignment(t, cs, members, time.Now(), 60*time.Second)
	t.Logf("replica-4 added: it holds its buckets %s after its start", took.Round(time.Millisecond))
	wave(t, ri, names, 2)
	awaitHandled(t, ri, names, "update_fn", 2, 60*time.Second)
	checkOnce(t, record, names, "update_fn", "2", replicas, members)
	for _, r := range readAudit(t, record).runs {
		if r.object == namespace+"/"+victim && r.wave == "0" && r.handler != "create_fn" {
			t.Errorf("a handler ran when the label of %s was removed: %+v", victim, r)
		}
	}
	for _, id := range members {
		replicas[id].Stop(t, 30*time.Second)
	}
	checkRequests(t, readRequests(t, audit), key, killedAt)
}

// wave sets spec.wave of every object.
func wave(t *testing.T, ri dynamic.ResourceInterface, names []string, n int) {
	t.Helper()
	for _, name := range names {
		if err := setWave(ri, n)(name); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitHandled waits until the handler id reports the wave in the status
// of every object.
func awaitHandled(t *testing.T, ri dynamic.ResourceInterface, names []string, id string, wave int64, timeout time.Duration) {
	t.Helper()
	var missing []string
	err := cluster.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		missing = nil
		for _, name := range names {
			obj, err := ri.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if w, found, _ := unstructured.NestedInt64(obj.Object, "status", id, "wave"); !found || w != wave {
				missing = append(missing, name)
			}
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		t.Fatalf("%d objects lack %s's result of wave %d after %s: %v (%v)", len(missing), id, wave, timeout, missing, err)
	}
}

// checkLabels checks that every object carries its bucket label.
func checkLabels(t *testing.T, ri dynamic.ResourceInterface, key string) {
	t.Helper()
	list, err := ri.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range list.Items {
		want := strconv.Itoa(sharding.KeyBucket(sharding.ObjectKey(obj.GetNamespace(), obj.GetName()), buckets))
		if got := obj.GetLabels()[key]; got != want {
			t.Errorf("%s: label %s=%q, want %q", obj.GetName(), key, got, want)
		}
	}
}

// checkOnce checks that the handler ran once per object in the wave, on
// one of the replicas, and, if members are given, on the owner of the
// object's bucket among them.
func checkOnce(t *testing.T, record string, names []string, handler, wave string, replicas map[string]*proc.Process, members []string) {
	t.Helper()
	pids := map[int]bool{}
	for _, p := range replicas {
		pids[p.Pid()] = true
	}
	var owners []string // no members: any replica may have run it
	if members != nil {
		owners = sharding.Assign(buckets, members)
	}
	changes := readAudit(t, record).changes(handler, wave)
	for _, name := range names {
		object := namespace + "/" + name
		ch := changes[object]
		if ch == nil || len(ch.invoked) != 1 || len(ch.finished) != 1 {
			t.Errorf("%s of %s in wave %s: %+v, want one run", handler, object, wave, ch)
			continue
		}
		if !pids[ch.finished[0].pid] {
			t.Errorf("%s of %s in wave %s ran on pid %d, which is no replica's", handler, object, wave, ch.finished[0].pid)
			continue
		}
		if members == nil {
			continue
		}
		owner := owners[sharding.KeyBucket(object, buckets)]
		if p := replicas[owner]; p == nil || ch.finished[0].pid != p.Pid() {
			t.Errorf("%s of %s in wave %s ran on pid %d, not on its bucket's owner %s", handler, object, wave, ch.finished[0].pid, owner)
		}
	}
}

// checkRequests checks that every listing and watch of KopfExamples by a
// replica selected a set of its buckets (key in (b1,b2,...), one watch
// over the set held) or the unlabelled objects (!key), but the reads of
// one object by name; and that after the kill, the bucket listings of
// the survivors are of sets of the buckets that they or the killed
// replica held (the sets grow by the killed replica's buckets, and shrink
// by those moved to replica-4).
func checkRequests(t *testing.T, reqs []request, key string, killedAt time.Time) {
	t.Helper()
	owners := sharding.Assign(buckets, []string{"replica-1", "replica-2", "replica-3"})
	perReplica, listings := map[string]int{}, map[string]int{}
	for _, r := range reqs {
		if r.verb != "list" && r.verb != "watch" {
			continue
		}
		sel := r.query.Get("labelSelector")
		if strings.HasPrefix(r.query.Get("fieldSelector"), "metadata.name=") {
			continue // one object read again by name (a watch's Deleted event)
		}
		perReplica[r.replica]++
		if sel == "!"+key {
			continue
		}
		set, err := bucketSet(sel, key)
		if err != nil {
			t.Errorf("%s's %s without its bucket selector: %v: %v", r.replica, r.verb, r.query, err)
			continue
		}
		fresh := r.verb == "list" || r.query.Get("sendInitialEvents") == "true" // a set's first listing, not a watch resumed
		if !fresh {
			continue
		}
		listings[r.replica]++
		for _, b := range set {
			if r.at.After(killedAt) && r.replica != "replica-4" && owners[b] != "replica-1" && owners[b] != r.replica {
				t.Errorf("%s listed bucket %d after the kill, which neither it nor replica-1 held", r.replica, b)
			}
		}
	}
	if len(perReplica) < 4 {
		t.Errorf("the requests of some replicas are missing from the audit log: %v", perReplica)
	}
	t.Logf("listings and watches of KopfExamples per replica, each with its selector: %v; of them, bucket sets listed: %v", perReplica, listings)
}

// bucketSet returns the buckets that a label selector selects by the
// bucket label key (key in (...), or key=b).
func bucketSet(selector, key string) ([]int, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, err
	}
	reqs, _ := sel.Requirements()
	for _, req := range reqs {
		if req.Key() != key || req.Operator() != selection.In && req.Operator() != selection.Equals {
			continue
		}
		var set []int
		for _, v := range req.ValuesUnsorted() {
			b, err := strconv.Atoi(v)
			if err != nil {
				return nil, err
			}
			set = append(set, b)
		}
		return set, nil
	}
	return nil, fmt.Errorf("no set of buckets by %s", key)
}

// In the server mode, on an API server without sharded list and watch
// (this one: 1.35), the resource is watched whole and filtered in the
// replica, with a warning; its objects are handled as in the filter mode.
func TestServerModeFallsBackToTheFilter(t *testing.T) {
	env := newRig(t)
	cs, ri := env.cs, env.ri
	p := env.replica(t, "replica-a", "--shard-mode=server")
	awaitAssignment(t, cs, []string{"replica-a"}, time.Now(), 60*time.Second)
	var names []string
	for i := range 5 {
		names = append(names, fmt.Sprintf("obj-%d", i))
		if _, err := createExample(ri, names[i]); err != nil {
			t.Fatal(err)
		}
	}
	awaitHandled(t, ri, names, "create_fn", 0, 30*time.Second)
	p.Stop(t, 30*time.Second)
	data, err := os.ReadFile(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "kopfexamples.v1.kopf.dev is watched whole and filtered here (the filter mode)"; !strings.Contains(string(data), want) {
		t.Errorf("the replica's log does not say %q", want)
	}
}
