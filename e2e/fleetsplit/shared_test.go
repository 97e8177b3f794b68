package fleetsplit

import (
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/clusters/clusterstest"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// The Leases' timing of the replicas: short, so that the test is (not
// 3 s: at exactly three intervals a replica gives its clusters up
// whenever a renewal is a moment late, sharding's rule).
const (
	leaseDuration = 4 * time.Second
	renewInterval = time.Second
	buckets       = 64
)

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// cuttable is cfg with a switch that makes every request fail, as for a
// replica cut off from the home cluster (or killed: nothing it would
// write on its way out arrives).
func cuttable(cfg *rest.Config, cut *atomic.Bool) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if cut.Load() {
				return nil, errors.New("cut off by the test")
			}
			return rt.RoundTrip(r)
		})
	}
	return cfg
}

func TestSharedSplitsTheClusters(t *testing.T) {
	c := cluster.Start(t)
	ctx := t.Context()
	names := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}
	var fleet []clusters.Cluster
	for _, n := range names {
		fleet = append(fleet, clusters.Cluster{Name: n, Config: &rest.Config{Host: "https://" + n}})
	}
	ids := []string{"replica-a", "replica-b"}
	owned := func(id string, members []string) []string {
		var out []string
		for _, n := range names {
			if sharding.Owner(sharding.Bucket(n, buckets), members) == id {
				out = append(out, n)
			}
		}
		return out
	}
	if len(owned(ids[0], ids)) == 0 || len(owned(ids[1], ids)) == 0 {
		t.Fatalf("the test's names do not split between its replicas: %v", owned(ids[0], ids))
	}
	var cutB atomic.Bool
	sinks := []*clusterstest.Sink{{}, {}}
	stops := make([]func(), 2)
	for i, id := range ids {
		home := c.Config
		if i == 1 {
			home = cuttable(home, &cutB)
		}
		p := clusters.Shared(home, clusters.List(fleet...), clusters.SharedOptions{Group: "fleet-test", Identity: id, Buckets: buckets, LeaseDuration: leaseDuration, RenewInterval: renewInterval})
		stops[i] = run(t, ctx, p, sinks[i])
	}
	engaged := func(want []string) func(map[string]*rest.Config) bool {
		return func(got map[string]*rest.Config) bool {
			names := make([]string, 0, len(got))
			for n := range got {
				names = append(names, n)
			}
			slices.Sort(names)
			return slices.Equal(names, want)
		}
	}
	noOverlap := func(t *testing.T) {
		t.Helper()
		if err := clusterstest.Overlap(sinks...); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("split", func(t *testing.T) {
		for i, id := range ids {
			sinks[i].Await(t, wait, id+" serves its share", engaged(owned(id, ids)))
		}
		noOverlap(t)
	})

	t.Run("cut off: gives up before the other takes over, then rejoins", func(t *testing.T) {
		cutB.Store(true)
		sinks[1].Await(t, wait, "replica-b gives its clusters up", engaged(nil))
		sinks[0].Await(t, wait, "replica-a takes every cluster over", engaged(names))
		noOverlap(t)
		cutB.Store(false)
		for i, id := range ids {
			sinks[i].Await(t, wait, id+" serves its share again", engaged(owned(id, ids)))
		}
		noOverlap(t)
	})

	t.Run("killed: its clusters move once its Lease expires", func(t *testing.T) {
		cutB.Store(true) // nothing it writes on its way out arrives: its claims stay
		killed := time.Now()
		stops[1]()
		sinks[0].Await(t, wait, "replica-a takes every cluster over", engaged(names))
		noOverlap(t)
		for _, r := range sinks[0].Records() {
			if r.Config != nil && slices.Contains(owned(ids[1], ids), r.Name) && r.At.After(killed) && r.At.Sub(killed) < leaseDuration-renewInterval {
				t.Errorf("replica-a engaged %s %s after the kill: before replica-b's Lease could expire", r.Name, r.At.Sub(killed))
			}
		}
	})
}
