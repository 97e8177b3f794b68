// Package clusterstest has what tests of cluster providers share: a Sink
// that records what a provider tells it, with the time, and the check that
// no cluster was served by two sinks at once (the replicas of a fleet).
package clusterstest

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/clusters"
)

// Sink is a clusters.Sink that records what it is told, with the time:
// the clusters engaged now and every Engage and Disengage. Fail, if set,
// makes Engage fail for the clusters it returns an error for. The zero
// value is ready to use; it is safe for concurrent use.
type Sink struct {
	Fail func(clusters.Cluster) error

	mu      sync.Mutex
	engaged map[string]*rest.Config
	records []SinkRecord
}

// SinkRecord is one call of a Sink: an Engage (Config set) or a
// Disengage (Config nil) of the cluster Name, at At (Engage: when called;
// Disengage: when it returned, as the serving stopped then).
type SinkRecord struct {
	At     time.Time
	Name   string
	Config *rest.Config
}

// Engage implements clusters.Sink.
func (s *Sink) Engage(_ context.Context, c clusters.Cluster) error {
	if s.Fail != nil {
		if err := s.Fail(c); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.engaged == nil {
		s.engaged = map[string]*rest.Config{}
	}
	s.engaged[c.Name] = c.Config
	s.records = append(s.records, SinkRecord{At: time.Now(), Name: c.Name, Config: c.Config})
	return nil
}

// Disengage implements clusters.Sink.
func (s *Sink) Disengage(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.engaged[name]; ok {
		delete(s.engaged, name)
		s.records = append(s.records, SinkRecord{At: time.Now(), Name: name})
	}
	return nil
}

// Engaged returns the clusters engaged now, by name.
func (s *Sink) Engaged() map[string]*rest.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.engaged)
}

// Names returns the names of the clusters engaged now, sorted.
func (s *Sink) Names() []string {
	names := make([]string, 0)
	for n := range s.Engaged() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Records returns the calls so far, in order.
func (s *Sink) Records() []SinkRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SinkRecord(nil), s.records...)
}

// Await polls until cond holds of the clusters engaged now, failing the
// test with what is engaged if it does not within timeout.
func (s *Sink) Await(t testing.TB, timeout time.Duration, what string, cond func(map[string]*rest.Config) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond(s.Engaged()) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s; engaged: %v", timeout, what, s.Names())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Overlap says whether two of the sinks served one cluster at one time:
// for each cluster, the spans from its Engage to its Disengage (or now) in
// each sink must not intersect those of another sink.
func Overlap(sinks ...*Sink) error {
	type span struct {
		sink       int
		start, end time.Time
	}
	spans := map[string][]span{}
	now := time.Now()
	for i, s := range sinks {
		open := map[string]time.Time{}
		for _, r := range s.Records() {
			if _, ok := open[r.Name]; r.Config != nil && !ok {
				open[r.Name] = r.At
			} else if r.Config == nil {
				spans[r.Name] = append(spans[r.Name], span{i, open[r.Name], r.At})
				delete(open, r.Name)
			}
		}
		for name, start := range open {
			spans[name] = append(spans[name], span{i, start, now})
		}
	}
	for name, ss := range spans {
		for _, a := range ss {
			for _, b := range ss {
				if a.sink < b.sink && a.start.Before(b.end) && b.start.Before(a.end) {
					return fmt.Errorf("the cluster %s was served by sink %d (%s–%s) and sink %d (%s–%s) at once", name, a.sink, a.start.Format(time.StampMilli), a.end.Format(time.StampMilli), b.sink, b.start.Format(time.StampMilli), b.end.Format(time.StampMilli))
				}
			}
		}
	}
	return nil
}
