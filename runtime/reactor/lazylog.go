package reactor

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/kopf-go/kopf/runtime/body"
)

// lazyObjectLogger returns the object's logger (objectLogger), made when
// first needed. A timer's tick or a daemon's attempt gets a logger (for
// its kwargs and its own lines) whose records are mostly filtered out by
// level; the object's logger (the handler's WithAttrs: a clone with the
// object's reference pre-formatted) is then never made. Records,
// attributes and groups go to that logger, made once; Enabled asks the
// reactor's logger, as the object's would answer (WithAttrs keeps a
// handler's level, as slog's handlers and this project's do). When INFO
// is written, a tick's success line ("Timer 'x' succeeded.") needs the
// object's logger anyway: it is made at once.
func (r *Reactor) lazyObjectLogger(b body.Body) *slog.Logger {
	if r.Logger.Enabled(context.Background(), slog.LevelInfo) {
		return r.objectLogger(b)
	}
	return slog.New(&lazyObjectHandler{r: r, b: b})
}

// lazyObjectHandler is the handler of lazyObjectLogger: 24 bytes, made on
// every tick, so not in the size class of the maps' headers that the
// bodies keep (48 bytes: a tick's garbage there scatters them).
type lazyObjectHandler struct {
	r *Reactor
	b body.Body                    // the reactor's own: read, never changed
	h atomic.Pointer[slog.Handler] // the object logger's, once made
}

// object returns the object logger's handler, made on first use (by two
// callers at once: one of them is kept, both are the same).
func (h *lazyObjectHandler) object() slog.Handler {
	if p := h.h.Load(); p != nil {
		return *p
	}
	made := h.r.objectLogger(h.b).Handler()
	if h.h.CompareAndSwap(nil, &made) {
		return made
	}
	return *h.h.Load()
}

func (h *lazyObjectHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.r.Logger.Handler().Enabled(ctx, l)
}

func (h *lazyObjectHandler) Handle(ctx context.Context, rec slog.Record) error {
	return h.object().Handle(ctx, rec)
}

func (h *lazyObjectHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.object().WithAttrs(attrs)
}

func (h *lazyObjectHandler) WithGroup(name string) slog.Handler {
	return h.object().WithGroup(name)
}
