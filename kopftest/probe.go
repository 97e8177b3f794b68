package kopftest

import (
	"context"
	"errors"
	"sync"

	"github.com/kopf-go/kopf/runtime/operator"
)

// probes holds the operator's runner of probe handlers, given once its
// startup handlers have succeeded.
type probes struct {
	mu sync.Mutex
	fn operator.ProbeFunc
}

func (o *Operator) setProbe(fn operator.ProbeFunc) {
	o.probe.mu.Lock()
	defer o.probe.mu.Unlock()
	o.probe.fn = fn
}

// ErrNotStarted is Probe's error before the operator's startup handlers
// have succeeded (or when they failed).
var ErrNotStarted = errors.New("kopftest: the operator has not started yet")

// Probe runs the operator's probe handlers (Kopf's on.probe) as its
// health endpoint does, and returns their results by handler id: what
// the endpoint would serve as JSON, before the encoding (the values are
// as the handlers returned them). The error is a failed probe's, or
// ErrNotStarted before the startup handlers have succeeded.
func (o *Operator) Probe(ctx context.Context) (map[string]any, error) {
	o.probe.mu.Lock()
	fn := o.probe.fn
	o.probe.mu.Unlock()
	if fn == nil {
		return nil, ErrNotStarted
	}
	return fn(ctx)
}
