package posting

import (
	"context"
	"log/slog"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/logging"
)

// ForObject returns a logger whose records are about obj: it carries the
// attribute logging.ObjectKey, as logging.ForObject does, but with the
// object's ObjectRef as the value instead of a plain string. The
// project's text and JSON formats print it the same ("namespace/name"); the
// handler of NewLogHandler additionally knows which object to post about.
//
// A logger made by logging.ForObject (plain string) is never posted: it is
// the equivalent of Kopf's LocalObjectLogger.
func ForObject(l *slog.Logger, obj body.Body) *slog.Logger {
	return l.With(slog.Any(logging.ObjectKey, RefOf(obj)))
}

// NewLogHandler returns a handler that passes every record to next, as
// next would handle it alone, and also posts the records about objects as
// events through p, as Kopf does with settings.posting.loggers: reason
// "Logging", the record's message as the message, and the type by the
// record's level (see the Type constants: Debug, Normal, Warning, Error,
// Fatal).
//
// A record is posted if and only if p posts at all (not nil, not stopped,
// enabled), its level is at or above p's Options.Level — independently of
// next's own level — and it carries an ObjectRef under logging.ObjectKey,
// added with the logger's With (see ForObject) or to the record itself
// outside any group. A plain-string ObjectKey is not enough.
//
// Posting never blocks and never fails the record; Handle returns next's
// error only.
func NewLogHandler(next slog.Handler, p *Poster) slog.Handler {
	return &logHandler{next: next, poster: p}
}

type logHandler struct {
	next    slog.Handler
	poster  *Poster
	ref     *ObjectRef // from WithAttrs, outside groups
	grouped bool       // a group is open: later attributes are not the object's
}

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l) || h.poster.allows(l)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.next.Enabled(ctx, r.Level) {
		err = h.next.Handle(ctx, r)
	}
	if !h.poster.allows(r.Level) {
		return err
	}
	ref := h.ref
	if ref == nil && !h.grouped {
		r.Attrs(func(a slog.Attr) bool {
			ref = refOf(a)
			return ref == nil
		})
	}
	if ref != nil {
		h.poster.PostRef(*ref, logEventType(r.Level), ReasonLogging, r.Message)
	}
	return err
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(attrs)
	if !h.grouped {
		for _, a := range attrs {
			if ref := refOf(a); ref != nil {
				c.ref = ref
			} else if a.Key == logging.ObjectKey {
				c.ref = nil // a plain reference overrides: not posted
			}
		}
	}
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.next = h.next.WithGroup(name)
	c.grouped = true
	return &c
}

// refOf returns the object reference an attribute carries, or nil.
func refOf(a slog.Attr) *ObjectRef {
	if a.Key != logging.ObjectKey {
		return nil
	}
	switch v := a.Value.Any().(type) {
	case ObjectRef:
		return &v
	case *ObjectRef:
		if v != nil {
			c := *v
			return &c
		}
	}
	return nil
}

// ObjectReference returns the reference as package logging's JSON format
// writes it (Kopf's k8s_ref): it makes ObjectRef a logging.Referencer.
func (r ObjectRef) ObjectReference() logging.Reference {
	return logging.Reference{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: r.UID, Namespace: r.Namespace}
}
