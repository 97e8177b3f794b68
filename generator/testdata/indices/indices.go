// Package indices is a golden package of index functions of every shape
// and handlers of every kind reading them.
package indices

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kopf-go/kopf"
)

// PodKey identifies a pod in an index.
type PodKey struct {
	Namespace, Name string
}

// ByLabel indexes pods by their labels: Kopf's dict shape.
//
//kopf:index pods
func ByLabel(ctx context.Context, kw ByLabelKwargs) map[[2]string]string {
	out := map[[2]string]string{}
	for k, v := range kw.Labels {
		out[[2]string{k, v}] = kw.Name
	}
	return out
}

// IsRunning indexes pods by namespace and name, typed, with an error.
//
//kopf:index v1/pods id=running labels={app: PRESENT} errors=temporary backoff=30s retries=3
func IsRunning(ctx context.Context, kw IsRunningKwargs) (map[PodKey]bool, error) {
	if kw.Object == nil {
		return nil, fmt.Errorf("no pod")
	}
	return map[PodKey]bool{{kw.Namespace, kw.Name}: kw.Object.Status.Phase == corev1.PodRunning}, nil
}

// Phases is a single value per object: Kopf's None key.
//
//kopf:index kopfexamples when=hasPhase
func Phases(ctx context.Context, kw PhasesKwargs) (string, bool) {
	phase, ok := kw.Status["phase"].(string)
	return phase, ok
}

func hasPhase(kw PhasesKwargs) bool { return kw.Status != nil }

// Names returns a bare value (Kopf's index function returning a value
// that is not a dict): always there, under kopf.None.
//
//kopf:index kopfexamples
func Names(ctx context.Context, kw NamesKwargs) string {
	return kw.Name
}

// Seen records what the handlers saw of the indices.
var Seen = map[string]int{}

// Create reads an index.
//
//kopf:on.create kopfexamples when=ready
func Create(ctx context.Context, kw CreateKwargs) (any, error) {
	Seen["create"] = kw.ByLabel.Len()
	if names, ok := kw.Names.Get(kopf.None{}); ok {
		Seen["names"] = names.Len()
	}
	return nil, nil
}

// ready is a when= callback taking the handler's own kwargs, with indices.
func ready(kw CreateKwargs) bool { return kw.Phases.Len() > 0 }

// Watch is an event handler reading an index.
//
//kopf:on.event kopfexamples
func Watch(ctx context.Context, kw WatchKwargs) error {
	Seen["watch"] = kw.IsRunning.Len()
	return nil
}

// Monitor is a daemon of a typed resource reading an index.
//
//kopf:daemon pods when=monitored
func Monitor(ctx context.Context, kw MonitorKwargs) error {
	Seen["monitor"] = kw.ByLabel.Len()
	return nil
}

// monitored is a typed when= callback with the indices.
func monitored(kw MonitorKwargs) bool { return kw.Object != nil && kw.IsRunning.Len() > 0 }

// Tick is a timer reading an index.
//
//kopf:timer kopfexamples interval=5
func Tick(ctx context.Context, kw TickKwargs) (any, error) {
	s, _ := kw.Phases.Get(struct{}{})
	Seen["tick"] = s.Len()
	return nil, nil
}

// Admit is an admission handler of a typed resource reading an index,
// with a when= callback taking its own kwargs.
//
//kopf:on.validate pods when=admitted
func Admit(ctx context.Context, kw AdmitKwargs) error {
	Seen["admit"] = kw.ByLabel.Len()
	return nil
}

// admitted is a typed when= callback of an admission handler with the
// indices.
func admitted(kw AdmitKwargs) bool { return kw.Object != nil && kw.IsRunning.Len() > 0 }
