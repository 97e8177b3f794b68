package reactor

import (
	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/resources"
)

// Observation is how one attempt of one handler on one object ended, as
// the reactor concluded it. It is reported to Reactor.Observe so that
// tests (package kopftest) can assert which handlers ran and how, per
// object, without parsing the log. It carries what the reactor knows and
// stores, not a new judgement: Outcome is what execution.Execute returned
// (Success, Failure, or neither with a Delay: a retry), so an attempt
// refused before the call (retries or timeout exhausted) is reported as a
// failure too.
type Observation struct {
	Resource  resources.Resource
	Namespace string // "" for a cluster-scoped object
	Name      string
	UID       string
	// Handler is the handler's id; a sub-handler's is "<parent>/<child>".
	Handler string
	// Reason is the cause the handler ran for (create, update, delete,
	// resume); "" for an on.event handler.
	Reason causes.Reason
	// Retry counts this handler's earlier attempts for the cause.
	Retry   int
	Outcome execution.Outcome
	// Interrupted: the operator's exit cancelled the attempt, and nothing
	// of it is stored (the next run of the operator retries it).
	Interrupted bool
}

// observation describes an attempt on the object b.
func (r *Reactor) observation(b body.Body, handler string, reason causes.Reason, retry int, out execution.Outcome) Observation {
	meta := b.Meta()
	return Observation{
		Resource:  r.Resource,
		Namespace: meta.Namespace(),
		Name:      meta.Name(),
		UID:       meta.UID(),
		Handler:   handler,
		Reason:    reason,
		Retry:     retry,
		Outcome:   out,
	}
}

// report calls r.Observe with each observation, in order.
func (r *Reactor) report(observed []Observation) {
	if r.Observe == nil {
		return
	}
	for _, o := range observed {
		r.Observe(o)
	}
}
