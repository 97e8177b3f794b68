package apiserver

import (
	"context"
	"log/slog"
	"sync"

	"github.com/kopf-go/kopf/runtime/logging"
)

// Warnings logs the warnings that the API server sends in responses
// ("The API server warns: <text>"), each distinct text once: the same
// warning (e.g. about a field that a CRD's schema prunes) may come with
// every patch.
type Warnings struct {
	logger *slog.Logger
	mu     sync.Mutex
	seen   map[string]bool
}

// NewWarnings returns the warning handler of a rest.Config
// (WarningHandlerWithContext) that logs to logger.
func NewWarnings(logger *slog.Logger) *Warnings {
	return &Warnings{logger: logger, seen: map[string]bool{}}
}

// maxWarnings bounds the texts remembered; past it, they are forgotten.
const maxWarnings = 256

// HandleWarningHeaderWithContext logs a warning once per text: through
// the logger of the object in ctx (logging.WithLogger: a handler's
// request about its object), else the operator's logger.
func (w *Warnings) HandleWarningHeaderWithContext(ctx context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	if len(w.seen) >= maxWarnings {
		clear(w.seen)
	}
	seen := w.seen[text]
	w.seen[text] = true
	w.mu.Unlock()
	if !seen {
		logging.FromContext(ctx, w.logger).Warn("The API server warns: " + text)
	}
}
