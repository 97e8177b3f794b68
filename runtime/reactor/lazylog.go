package reactor

import (
	"context"
	"log/slog"
	"sync"

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

// lazyObjectHandler is the handler of lazyObjectLogger.
type lazyObjectHandler struct {
	r    *Reactor
	b    body.Body // the reactor's own: read, never changed
	once sync.Once
	h    slog.Handler // the object logger's, once made
}

func (h *lazyObjectHandler) object() slog.Handler {
	h.once.Do(func() { h.h = h.r.objectLogger(h.b).Handler() })
	return h.h
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
