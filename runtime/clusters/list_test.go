package clusters_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/clusters/clusterstest"
)

const wait = 10 * time.Second

func cluster(name, host string) clusters.Cluster {
	return clusters.Cluster{Name: name, Config: &rest.Config{Host: host}}
}

// run runs p on sink until the test ends, and fails the test if Run
// returns an error or does not return once its context is done.
func run(t *testing.T, p clusters.Provider, sink clusters.Sink) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, sink) }()
	stop := func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(wait):
			t.Errorf("Run did not return within %s of its context's end", wait)
		}
	}
	t.Cleanup(stop)
	return cancel
}

func names(want ...string) func(map[string]*rest.Config) bool {
	return func(got map[string]*rest.Config) bool {
		if len(got) != len(want) {
			return false
		}
		for _, n := range want {
			if _, ok := got[n]; !ok {
				return false
			}
		}
		return true
	}
}

func TestListEngagesAddsAndRemoves(t *testing.T) {
	ctx := t.Context()
	l := clusters.List(cluster("a", "https://a"), cluster("b", "https://b"))
	if err := l.Add(ctx, cluster("c", "https://c")); err != nil { // before Run
		t.Fatal(err)
	}
	if err := l.Remove(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	sink := &clusterstest.Sink{}
	run(t, l, sink)
	sink.Await(t, wait, "a and c engaged at the start", names("a", "c"))

	if err := l.Add(ctx, cluster("d", "https://d")); err != nil {
		t.Fatal(err)
	}
	if got := sink.Names(); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Fatalf("after Add(d): %v", got) // Add returns once engaged
	}
	if err := l.Add(ctx, cluster("a", "https://a2")); err != nil {
		t.Fatal(err)
	}
	if host := sink.Engaged()["a"].Host; host != "https://a2" {
		t.Fatalf("a re-added: engaged with %s", host)
	}
	if err := l.Remove(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if got := sink.Names(); !slices.Equal(got, []string{"a", "d"}) {
		t.Fatalf("after Remove(c): %v", got) // Remove returns once disengaged
	}
	if err := l.Remove(ctx, "nope"); err != nil {
		t.Fatalf("removing an unknown cluster: %v", err)
	}
	got := []string{}
	for _, c := range l.Clusters() {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, []string{"a", "d"}) {
		t.Fatalf("Clusters: %v", got)
	}
}

func TestListAddFailsWithTheSink(t *testing.T) {
	refused := errors.New("refused")
	sink := &clusterstest.Sink{Fail: func(c clusters.Cluster) error {
		if c.Name == "bad" {
			return refused
		}
		return nil
	}}
	l := clusters.List(cluster("bad", "https://bad"), cluster("good", "https://good"))
	run(t, l, sink)
	sink.Await(t, wait, "good engaged, bad logged", names("good"))
	if err := l.Add(t.Context(), cluster("bad", "https://bad2")); !errors.Is(err, refused) {
		t.Fatalf("Add of a cluster the sink refuses: %v", err)
	}
	for _, tc := range []struct {
		name string
		c    clusters.Cluster
	}{
		{"no name", cluster("", "https://x")},
		{"no config", clusters.Cluster{Name: "x"}},
	} {
		if err := l.Add(t.Context(), tc.c); err == nil {
			t.Errorf("Add of a cluster with %s: no error", tc.name)
		}
	}
}

func TestListRunsOnOneSinkAtATime(t *testing.T) {
	l := clusters.List(cluster("a", "https://a"))
	first := &clusterstest.Sink{}
	cancel := run(t, l, first)
	first.Await(t, wait, "the first Run started", names("a"))
	if err := l.Run(t.Context(), &clusterstest.Sink{}); err == nil {
		t.Fatal("a second Run while one runs: no error")
	}
	cancel()
	// Once the first Run has returned, another may run.
	deadline := time.Now().Add(wait)
	for {
		ctx, stop := context.WithTimeout(t.Context(), 50*time.Millisecond)
		err := l.Run(ctx, &clusterstest.Sink{})
		stop()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Run after the first one ended: %v", err)
		}
	}
}
