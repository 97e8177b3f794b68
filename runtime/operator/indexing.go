package operator

import (
	"context"
	"sync"

	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/watching"
)

// indexGate holds the handlers of every resource until the first listing
// of every indexed resource is indexed (Kopf's operator_indexed toggles):
// handlers never see a partial index at start. Indexing happens in the
// watches' callbacks, not in the workers (see indexing.Indexer), so the
// workers waiting here never hold up the indexing, whatever
// settings.Queueing.WorkerLimit is.
//
// The gate counts the watches of indexed resources whose first listing is
// not indexed yet. It opens once the first pass over the registry's
// resources has started every watch it could (sealed) and none is
// waiting; an indexed resource resolved later (its CRD created after the
// start) does not close it again, as in Kopf, where it has no toggle
// either. A watch that cannot list (e.g. RBAC forbids it) keeps it shut.
type indexGate struct {
	mu      sync.Mutex
	waiting int
	sealed  bool
	open    chan struct{}
}

func newIndexGate() *indexGate { return &indexGate{open: make(chan struct{})} }

// watch registers a watch of an indexed resource about to start, and
// returns what it calls once its first listing is indexed. Watches
// registered after the gate opened are not waited for.
func (g *indexGate) watch() func() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.isOpen() {
		return func() {}
	}
	g.waiting++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.waiting--
			g.check()
		})
	}
}

// seal says that the watches of the first pass over the resources are
// registered.
func (g *indexGate) seal() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sealed = true
	g.check()
}

func (g *indexGate) check() {
	if g.sealed && g.waiting == 0 && !g.isOpen() {
		close(g.open)
	}
}

func (g *indexGate) isOpen() bool {
	select {
	case <-g.open:
		return true
	default:
		return false
	}
}

// hold wraps a worker's processing so that it starts once the gate is
// open (or the worker's context is done: the operator is exiting).
func (g *indexGate) hold(process queueing.Processor) queueing.Processor {
	if g == nil {
		return process
	}
	return func(ctx context.Context, ev watching.Event, s *queueing.Stream) {
		select {
		case <-g.open:
		case <-ctx.Done():
			return
		}
		process(ctx, ev, s)
	}
}
