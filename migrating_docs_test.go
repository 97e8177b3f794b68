package kopf_test

// The example of docs/migrating-from-kopf.md (module-level state), compiled
// here.

import (
	"context"
	"sync"

	"github.com/kopf-go/kopf"
)

// Seen is what a Python operator keeps in a module-level dict (SEEN = {}):
// the names of the objects created while it runs. Objects are processed in
// parallel, hence the mutex.
type Seen struct {
	mu    sync.Mutex
	names map[string]bool
}

// Add records a name and tells how many names are recorded.
func (s *Seen) Add(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[name] = true
	return len(s.names)
}

// StartSeen puts the operator's state in its memo, once per operator: each
// object's memo is a shallow copy of it, so every handler shares the *Seen.
//
//kopf:on.startup
func StartSeen(ctx context.Context, kw StartSeenKwargs) error {
	kw.Memo["seen"] = &Seen{names: map[string]bool{}}
	return nil
}

// RecordSeen is Kopf's `SEEN[name] = True` of a create handler.
//
//kopf:on.create kopfexamples
func RecordSeen(ctx context.Context, kw RecordSeenKwargs) (any, error) {
	seen := kw.Memo["seen"].(*Seen)
	return map[string]any{"seen": seen.Add(kw.Name)}, nil
}

// What kopf-gen generates beside the handlers above.
type (
	StartSeenKwargs  = kopf.ActivityKwargs
	RecordSeenKwargs = kopf.ChangingKwargs
)
