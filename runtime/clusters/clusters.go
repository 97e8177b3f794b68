// Package clusters says which clusters a fleet operator serves: a Provider
// yields them (a name and a client configuration) to a Sink as they appear
// and disappear, and the operator (package operator, Options.Clusters) is
// the sink that serves each one with its own pipelines. See
// docs/multicluster.md.
//
// The shape is multicluster-runtime's (sigs.k8s.io/multicluster-runtime:
// a provider engages clusters with a manager), with a Disengage that
// returns once the cluster's handlers have stopped, so that a provider that
// splits the clusters between replicas can hand one over only after its
// old owner has let it go.
package clusters

import (
	"context"

	"k8s.io/client-go/rest"
)

// Cluster is one cluster of a fleet.
type Cluster struct {
	// Name identifies the cluster in the operator's logs, metrics, health
	// and handlers' kwargs; unique within a provider, stable across
	// restarts (it is what replicas split by).
	Name string
	// Config is the cluster's client configuration, used as it is.
	Config *rest.Config
}

// Sink is what a Provider tells about its clusters.
type Sink interface {
	// Engage starts serving the cluster and returns without waiting for
	// it to be served: an error says it could not start (the provider may
	// try again later). Engaging a cluster already engaged under that
	// name with another Config serves it with the new one.
	Engage(ctx context.Context, c Cluster) error
	// Disengage stops serving the named cluster and returns once its
	// handlers, daemons and timers have stopped, or ctx is done; a name
	// not engaged is no error.
	Disengage(ctx context.Context, name string) error
}

// Provider yields the clusters of a fleet.
type Provider interface {
	// Run engages the clusters that exist and those that appear, and
	// disengages those that disappear, until ctx is done; then it returns
	// nil, leaving the engaged clusters to the sink. An error at start
	// (a source that cannot be read at all) is returned; later failures
	// of the source are logged and retried.
	Run(ctx context.Context, sink Sink) error
}
