package registry

import (
	"context"
	"errors"
	"sync"
)

// ErrNotInHandler is returned by Subhandler outside a changing handler.
var ErrNotInHandler = errors.New("sub-handlers can only be registered inside a changing handler")

type subhandlersKey struct{}

// Subhandlers collects the sub-handlers that a running changing handler
// registers (Kopf's @kopf.subhandler and kopf.register). The reactor runs
// them after the handler returns, each with its own progress under the id
// "<parent id>/<sub-handler id>"; the parent is finished only when all of
// them are.
type Subhandlers struct {
	mu   sync.Mutex
	list []*ChangingHandler
}

// WithSubhandlers returns a context in which Subhandler registers into the
// returned collector.
func WithSubhandlers(ctx context.Context) (context.Context, *Subhandlers) {
	s := &Subhandlers{}
	return context.WithValue(ctx, subhandlersKey{}, s), s
}

// List returns the registered sub-handlers in registration order.
func (s *Subhandlers) List() []*ChangingHandler {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*ChangingHandler(nil), s.list...)
}

// Subhandler registers a sub-handler of the changing handler running with
// ctx. Its ID must be unique among the parent's sub-handlers; its Reasons
// and Selector are the parent's and need not be set. A sub-handler may
// register sub-handlers of its own.
func Subhandler(ctx context.Context, h ChangingHandler) error {
	s, ok := ctx.Value(subhandlersKey{}).(*Subhandlers)
	if !ok {
		return ErrNotInHandler
	}
	if h.ID == "" || h.Fn == nil {
		return errors.New("a sub-handler needs an id and a function")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, other := range s.list {
		if other.ID == h.ID {
			return errors.New("sub-handler " + h.ID + " is registered twice")
		}
	}
	s.list = append(s.list, &h)
	return nil
}
