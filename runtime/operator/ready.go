package operator

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/kopf-go/kopf/runtime/execution"
)

// readiness calls Options.Ready once the operator is ready: every selector
// of the registry is resolved and every watch started for them has
// delivered its first listing to the workers. Kopf raises its ready_flag
// earlier, once the startup activities are done and before any watching;
// the first listing is what an embedding program usually waits for.
type readiness struct {
	mu       sync.Mutex
	fn       func() // nil once called, or if there is nothing to call
	logger   *slog.Logger
	resolved bool // every selector is resolved: no more watches will be added
	waiting  int  // watches whose first listing is not delivered yet
}

func newReadiness(fn func(), logger *slog.Logger) *readiness {
	return &readiness{fn: fn, logger: logger}
}

// watch registers a watch about to start and returns what it calls after
// its first listing.
func (r *readiness) watch() func() {
	r.mu.Lock()
	r.waiting++
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.waiting--
			r.mu.Unlock()
			r.check()
		})
	}
}

// allResolved says that every selector is resolved.
func (r *readiness) allResolved() {
	r.mu.Lock()
	r.resolved = true
	r.mu.Unlock()
	r.check()
}

// check calls the function, in a goroutine of its own and guarded against
// panics, if the operator has become ready.
func (r *readiness) check() {
	r.mu.Lock()
	fn := r.fn
	if fn == nil || !r.resolved || r.waiting > 0 {
		r.mu.Unlock()
		return
	}
	r.fn = nil
	r.mu.Unlock()
	go func() {
		if _, err := execution.Guard(func() (struct{}, error) { fn(); return struct{}{}, nil }); err != nil {
			r.logger.Error(fmt.Sprintf("The readiness callback has failed: %v", err))
			execution.LogPanicStack(r.logger, err)
		}
	}()
}
