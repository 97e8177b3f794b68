package sharding_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// Three replicas in the server mode on kube-apiserver 1.36.3 with the
// ShardedListAndWatch gate (cluster.StartSharded), serving a custom
// resource: that API server's lists of custom resources carry no
// metadata.shardInfo (unstructured lists do not implement it in 1.36.3),
// so the operator's probe at start (one object, bucket 0's selector)
// cannot tell that the selector applies, and each replica watches the
// resource whole and filters it, with the warning; each object is
// handled once, by the owner of its uid's bucket. (The built-in resources'
// lists do echo the selector: e2e/shardserver.) When a release echoes it
// for custom resources, the replicas watch by bucket instead, and this
// test says so by failing.
func TestServerMode(t *testing.T) {
	dir := t.TempDir()
	bin := proc.Build(t, "./internal/shardop", dir)
	policy, auditLog := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(requestsPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	c := cluster.StartSharded(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")),
		envtest.WithAPIServerFlag("audit-policy-file", policy), envtest.WithAPIServerFlag("audit-log-path", auditLog))
	kubeconfig := c.Kubeconfig(t, dir)
	record := filepath.Join(dir, "record")
	cs := kubernetes.NewForConfigOrDie(c.Config)
	ri := dynamic.NewForConfigOrDie(c.Config).Resource(kopfexamples).Namespace(namespace)
	members := []string{"replica-1", "replica-2", "replica-3"}
	replicas := map[string]*proc.Process{}
	for _, id := range members {
		link := filepath.Join(dir, id) // the binary's name is in the User-Agent
		if err := os.Symlink(bin, link); err != nil {
			t.Fatal(err)
		}
		replicas[id] = startReplica(t, link, kubeconfig, record, dir, id, "--shard-mode=server")
	}
	took := awaitAssignment(t, cs, members, time.Now(), 60*time.Second)
	settled := time.Now()
	t.Logf("3 replicas in the server mode hold their buckets %s after their start", took.Round(time.Millisecond))
	uids := map[string]string{}
	var names []string
	for i := range 60 {
		name := fmt.Sprintf("obj-%02d", i)
		obj, err := createExample(ri, name)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		uids[namespace+"/"+name] = string(obj.GetUID())
	}
	awaitHandled(t, ri, names, "create_fn", 0, 60*time.Second)
	checkOnceByUID(t, record, uids, replicas, members)
	for _, id := range members {
		replicas[id].Stop(t, 30*time.Second)
		data, err := os.ReadFile(replicas[id].Log)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"the API server does not honour shardSelector", "kopfexamples.v1.kopf.dev is watched whole and filtered here (the filter mode)"} {
			if !strings.Contains(string(data), want) {
				t.Errorf("%s's log does not say %q", id, want)
			}
		}
	}
	checkShardSelectors(t, readRequests(t, auditLog), members, settled)
}

// checkOnceByUID checks that create_fn ran once per object, on the owner
// of its uid's bucket among the members.
func checkOnceByUID(t *testing.T, record string, uids map[string]string, replicas map[string]*proc.Process, members []string) {
	t.Helper()
	owners := sharding.Assign(buckets, members)
	changes := readAudit(t, record).changes("create_fn", "0")
	perReplica := map[string]int{}
	for object, uid := range uids {
		ch := changes[object]
		if ch == nil || len(ch.invoked) != 1 || len(ch.finished) != 1 {
			t.Errorf("create_fn of %s: %+v, want one run", object, ch)
			continue
		}
		owner := owners[sharding.Bucket(uid, buckets)]
		if p := replicas[owner]; p == nil || ch.finished[0].pid != p.Pid() {
			t.Errorf("create_fn of %s ran on pid %d, not on its bucket's owner %s", object, ch.finished[0].pid, owner)
		}
		perReplica[owner]++
	}
	t.Logf("objects handled per replica: %v", perReplica)
}

// checkShardSelectors checks that the replicas' only requests to
// KopfExamples with a shardSelector were their probes at start, one
// each.
func checkShardSelectors(t *testing.T, reqs []request, members []string, _ time.Time) {
	t.Helper()
	probes := map[string]int{}
	for _, r := range reqs {
		sel := r.query.Get("shardSelector")
		if sel == "" {
			continue
		}
		if r.verb == "list" && r.query.Get("limit") == "1" && sel == sharding.ShardSelector([]int{0}, buckets) {
			probes[r.replica]++
			continue
		}
		t.Errorf("%s's %s with a shard selector, after its probe: %v", r.replica, r.verb, r.query)
	}
	for _, id := range members {
		if probes[id] != 1 {
			t.Errorf("%s probed the API server's shard selectors %d times, want once", id, probes[id])
		}
	}
}
