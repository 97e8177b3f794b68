package clusters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
)

// ListProvider is a Provider of clusters given in code (List): the
// clusters it holds when its Run starts are engaged then, in the order they
// were added; Add and Remove change the list before, during and after Run.
//
// While Run is running, Add engages the cluster on Run's sink (a cluster
// of a name already listed is re-engaged with the new Config) and returns
// the sink's error, in which case the list is left as it was; Remove
// disengages the named cluster and returns once the sink has stopped
// serving it (Sink.Disengage), or ctx is done. Before and after Run they
// only change the list. The calls are serialised: a Remove waiting for
// Disengage delays the next Add or Remove (not the clusters served).
//
// When Run's ctx is done, Run returns nil and leaves the engaged clusters
// to the sink (see Provider). A ListProvider runs on one sink at a time:
// a second Run while one is running is an error. It is safe for concurrent
// use.
type ListProvider struct {
	// Logger receives the failures to engage at the start of Run (nil:
	// slog.Default()).
	Logger *slog.Logger

	mu       sync.Mutex
	clusters []Cluster // in the order added
	sink     Sink      // Run's, while it runs
}

// List returns a ListProvider of the clusters cs (their names unique).
func List(cs ...Cluster) *ListProvider {
	l := &ListProvider{}
	for _, c := range cs {
		l.put(c)
	}
	return l
}

// valid checks a cluster given to a provider: a name and a Config.
func valid(c Cluster) error {
	if c.Name == "" {
		return errors.New("clusters: a cluster without a name")
	}
	if c.Config == nil {
		return fmt.Errorf("clusters: the cluster %s has no Config", c.Name)
	}
	return nil
}

// Add lists the cluster c, replacing one of its name, and engages it if
// Run is running.
func (l *ListProvider) Add(ctx context.Context, c Cluster) error {
	if err := valid(c); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sink != nil {
		if err := l.sink.Engage(ctx, c); err != nil {
			return fmt.Errorf("engaging the cluster %s: %w", c.Name, err)
		}
	}
	l.put(c)
	return nil
}

// Remove unlists the named cluster (a name not listed is no error) and,
// if Run is running, disengages it and waits for the sink to stop it.
func (l *ListProvider) Remove(ctx context.Context, name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.index(name)
	if i < 0 {
		return nil
	}
	l.clusters = append(l.clusters[:i], l.clusters[i+1:]...)
	if l.sink != nil {
		if err := l.sink.Disengage(ctx, name); err != nil {
			return fmt.Errorf("disengaging the cluster %s: %w", name, err)
		}
	}
	return nil
}

// Clusters returns the clusters listed now, in the order added.
func (l *ListProvider) Clusters() []Cluster {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Cluster(nil), l.clusters...)
}

// Run engages the listed clusters on sink, then engages and disengages
// what Add and Remove change until ctx is done. A cluster that the sink
// fails to engage at the start is logged and stays listed (an Add of it
// tries again).
func (l *ListProvider) Run(ctx context.Context, sink Sink) error {
	l.mu.Lock()
	if l.sink != nil {
		l.mu.Unlock()
		return errors.New("clusters: the list provider is running already")
	}
	l.sink = sink
	for _, c := range l.clusters {
		if err := valid(c); err != nil {
			logger(l.Logger).Error(err.Error())
		} else if err := sink.Engage(ctx, c); err != nil {
			logger(l.Logger).Error(fmt.Sprintf("Cluster %s could not be engaged: %v", c.Name, err))
		}
	}
	l.mu.Unlock()
	<-ctx.Done()
	l.mu.Lock()
	l.sink = nil
	l.mu.Unlock()
	return nil
}

// put lists c in place of its name's cluster, or at the end.
func (l *ListProvider) put(c Cluster) {
	if i := l.index(c.Name); i >= 0 {
		l.clusters[i] = c
		return
	}
	l.clusters = append(l.clusters, c)
}

func (l *ListProvider) index(name string) int {
	for i, c := range l.clusters {
		if c.Name == name {
			return i
		}
	}
	return -1
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
