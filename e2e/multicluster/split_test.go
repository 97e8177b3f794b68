package multicluster

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kopf-go/kopf/e2e/internal/proc"
)

// handledBy waits until the object of the fleet's i-th cluster has the
// fleetop handler's result, and returns the pid of the process that
// handled it, checking the cluster's name in its kwargs.
func handledBy(t *testing.T, i int, ns, name string, timeout time.Duration) int64 {
	t.Helper()
	var got map[string]any
	eventually(t, timeout, "fleetop's result in "+names[i]+"'s "+ns+"/"+name, func(ctx context.Context) (bool, error) {
		var err error
		got, err = status(t, ctx, i, ns, name, "create_fn")
		return got != nil, err
	})
	if got["cluster"] != names[i] {
		t.Errorf("%s's %s/%s was handled as the cluster %v", names[i], ns, name, got["cluster"])
	}
	pid, _ := got["pid"].(int64)
	return pid
}

// Two replicas of a fleet operator (processes run with --clusters-dir and
// --clusters-shared, their Leases in the first cluster) split the three
// clusters: every object is handled by the replica that serves its
// cluster. One replica is killed (SIGKILL: it releases nothing): once its
// Lease has expired (15 s, the default), the other serves its clusters,
// and the objects created meanwhile are handled there.
func TestReplicasSplitTheFleet(t *testing.T) {
	dir := t.TempDir()
	bin := proc.Build(t, "./internal/fleetop", dir)
	home := fleet[0].Kubeconfig(t, dir)
	fleetDir := filepath.Join(dir, "fleet")
	if err := os.Mkdir(fleetDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, c := range fleet {
		if err := c.WriteKubeconfig(filepath.Join(fleetDir, names[i]+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	ns := namespace(t, "split")
	replicas := map[int64]*proc.Process{}
	for _, name := range []string{"replica-a", "replica-b"} {
		p := proc.Start(t, bin, proc.Options{
			Name: name,
			Log:  filepath.Join(dir, name+".log"),
			Args: []string{"run", "-A", "--standalone", "-v", "--kubeconfig", home, "--clusters-dir", fleetDir, "--clusters-shared"},
		})
		replicas[int64(p.Pid())] = p
	}

	servedBy := map[int]int64{} // cluster → pid
	for i := range fleet {
		create(t, i, ns, "before")
	}
	for i := range fleet {
		servedBy[i] = handledBy(t, i, ns, "before", 90*time.Second)
		if replicas[servedBy[i]] == nil {
			t.Fatalf("%s was served by the pid %d, not a replica's", names[i], servedBy[i])
		}
	}
	t.Logf("served by: %v", servedBy)

	victim := replicas[servedBy[0]]
	var survivor int64
	for pid, p := range replicas {
		if p != victim {
			survivor = pid
		}
	}
	victim.Kill(t)
	killed := time.Now()
	for i := range fleet {
		create(t, i, ns, "after")
	}
	for i := range fleet {
		if pid := handledBy(t, i, ns, "after", 90*time.Second); pid != survivor {
			t.Errorf("%s's object created after the kill was handled by the pid %d, not the survivor's %d", names[i], pid, survivor)
		}
	}
	t.Logf("the survivor served the fleet %s after the kill", time.Since(killed).Round(time.Millisecond))
}
