package operator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/health"
	"github.com/kopf-go/kopf/runtime/logging"
)

// fleet is a fleet operator's serving of its clusters (Options.Clusters):
// the clusters.Sink that the provider engages them with. Each engaged
// cluster is served by an operator of its own (member) that runs the
// per-cluster parts (see parts) and serveResources, in a goroutine, as a
// single-cluster operator runs them; it shares the process-wide parts'
// results (the activities' memo, the metrics' registry, the memory
// releaser, the health endpoints) with the fleet's operator.
//
// A cluster that cannot be served (a part fails to start, e.g. its
// configuration is invalid; or a selector is ambiguous there) is logged
// with its name and tried again, 1, 2, 4... seconds later up to
// Options.RescanInterval; an unreachable cluster, or one that refuses the
// operator, is what its parts already retry (see apiserver.Health and
// serveResources). Neither holds up the others, nor Engage.
type fleet struct {
	home *operator // the process-wide part

	mu      sync.Mutex
	ctx     context.Context // the members' parent: the fleet's serving; nil before it starts
	stopped bool            // no more clusters are engaged
	members map[string]*member
}

// member is one engaged cluster.
type member struct {
	config *rest.Config
	cancel context.CancelFunc
	done   chan struct{} // closed once its parts have stopped

	mu      sync.Mutex
	current *operator // the operator of the latest attempt, for the health endpoints
}

func newFleet(home *operator) *fleet {
	return &fleet{home: home, members: map[string]*member{}}
}

var _ clusters.Sink = (*fleet)(nil)

// serveFleet is the fleet operator's serving, after its process-wide
// parts: it is ready at once (its clusters' readiness is theirs: see
// states), and runs the provider until ctx is done; then it disengages
// every cluster, and returns once they have stopped. Its error is the
// provider's.
func (o *operator) serveFleet(ctx context.Context) error {
	f := o.fleet
	f.mu.Lock()
	f.ctx = ctx
	f.mu.Unlock()
	defer f.stop()
	o.ready.allResolved()
	if err := o.opts.Clusters.Run(ctx, f); err != nil {
		return fmt.Errorf("the provider of the clusters has failed: %w", err)
	}
	<-ctx.Done()
	return nil
}

// Engage starts serving the cluster in the background (see fleet); a
// cluster engaged under that name with another Config is disengaged
// first.
func (f *fleet) Engage(ctx context.Context, c clusters.Cluster) error {
	if c.Name == "" || c.Config == nil {
		return fmt.Errorf("a cluster needs a name and a configuration: %q", c.Name)
	}
	f.mu.Lock()
	old := f.members[c.Name]
	f.mu.Unlock()
	if old != nil && old.config == c.Config {
		return nil
	}
	if old != nil {
		if err := f.Disengage(ctx, c.Name); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx == nil || f.stopped {
		return errors.New("the operator is not serving clusters: it is starting or stopping")
	}
	if f.members[c.Name] != nil {
		return fmt.Errorf("the cluster %s is engaged meanwhile", c.Name)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	m := &member{config: c.Config, cancel: cancel, done: make(chan struct{})}
	f.members[c.Name] = m
	go func() {
		defer close(m.done)
		f.serve(ctx, c, m)
	}()
	return nil
}

// Disengage stops serving the cluster and waits until its parts have
// stopped (its workers, daemons and timers included), or ctx is done.
func (f *fleet) Disengage(ctx context.Context, name string) error {
	f.mu.Lock()
	m := f.members[name]
	delete(f.members, name)
	f.mu.Unlock()
	if m == nil {
		return nil
	}
	m.cancel()
	select {
	case <-m.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the cluster %s is still stopping: %w", name, ctx.Err())
	}
}

// stop disengages every cluster, all at once, and waits for them.
func (f *fleet) stop() {
	f.mu.Lock()
	f.stopped = true
	members := f.members
	f.members = map[string]*member{}
	f.mu.Unlock()
	for _, m := range members {
		m.cancel()
	}
	for _, m := range members {
		<-m.done
	}
}

// serve serves one cluster until ctx is done: its per-cluster parts, then
// its resources, attempted again after a failure.
func (f *fleet) serve(ctx context.Context, c clusters.Cluster, m *member) {
	retry := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: f.home.opts.RescanInterval}
	for {
		o, err := f.member(c)
		if err == nil {
			m.mu.Lock()
			m.current = o
			m.mu.Unlock()
			o.logger.Info("Serving the cluster.")
			err = runParts(ctx, o.partsIn(perCluster), o.serveResources)
			if o.metrics != nil {
				o.metrics.Unregister()
			}
			if err == nil {
				o.logger.Info("The cluster is no longer served.")
				return
			}
		}
		delay := retry.Step()
		logging.ForCluster(f.home.logger, c.Name).Error(fmt.Sprintf("The cluster cannot be served: %v; retrying in %s seconds.", err, seconds(delay)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// member makes the operator of one cluster: the fleet's options with the
// cluster's Config (no Login: the provider renews it by engaging the
// cluster again), its logs marked with the cluster (logging.ForCluster),
// its metrics labelled with it, its own readiness and health monitor, and
// what the process-wide parts made.
func (f *fleet) member(c clusters.Cluster) (*operator, error) {
	home := f.home
	opts := home.opts
	opts.Config, opts.Login, opts.Clusters = c.Config, nil, nil
	opts.Logger = logging.ForCluster(home.opts.Logger, c.Name)
	opts.Ready = nil
	o := &operator{opts: opts, logger: logging.ForCluster(home.logger, c.Name), reg: home.reg, scope: home.scope,
		identity: home.identity, cluster: c.Name, objectsMemo: home.objectsMemo, releaser: home.releaser}
	o.ready = newReadiness(nil, o.logger)
	if home.monitor != nil {
		o.monitor = health.NewMonitor(opts.Settings.Watching.InactivityTimeout)
	}
	if home.metrics != nil {
		m, err := home.metrics.Cluster(c.Name)
		if err != nil {
			return nil, err
		}
		o.metrics = m
	}
	return o, nil
}

// states returns what lists the clusters' states for the health
// endpoints, by name; nil without a fleet.
func (f *fleet) states() func() []health.Cluster {
	if f == nil {
		return nil
	}
	return func() []health.Cluster {
		f.mu.Lock()
		members := make(map[string]*member, len(f.members))
		for name, m := range f.members {
			members[name] = m
		}
		f.mu.Unlock()
		states := make([]health.Cluster, 0, len(members))
		now := time.Now()
		for name, m := range members {
			m.mu.Lock()
			o := m.current
			m.mu.Unlock()
			state := health.Cluster{Name: name}
			if o != nil {
				ready, why := o.ready.state()
				if o.monitor != nil {
					state.Problems = o.monitor.Problems(now)
				}
				if !ready {
					state.Problems = append([]health.Problem{{Message: "The cluster is not ready yet: " + why + "."}}, state.Problems...)
				}
				state.Ready = ready && len(state.Problems) == 0
			}
			states = append(states, state)
		}
		sort.Slice(states, func(i, j int) bool { return states[i].Name < states[j].Name })
		return states
	}
}
