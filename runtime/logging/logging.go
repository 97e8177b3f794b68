// Package logging renders the operator's log/slog records the way Kopf
// renders its log: the "full" format `[time] logger [LEVEL   ] message`, the
// "plain" format `message`, or JSON. Records about one object carry the
// attribute ObjectKey ("namespace/name"); the text formats print it as the
// `[namespace/name] ` prefix of the message, as Kopf does, and JSON puts it
// in a field of its own.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// ObjectKey is the attribute that marks a record as being about one object.
const ObjectKey = "object"

// Format is a log format: "full", "plain" or "json".
type Format string

// The log formats of Kopf.
const (
	Full  Format = "full"
	Plain Format = "plain"
	JSON  Format = "json"
)

// ParseFormat checks a --log-format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Full, Plain, JSON:
		return f, nil
	}
	return "", fmt.Errorf("unknown log format %q: expected full, plain or json", s)
}

// New returns a logger writing to w in the given format, from the given
// level up. It is safe for concurrent use.
func New(w io.Writer, format Format, level slog.Level) *slog.Logger {
	if format == JSON {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	}
	return slog.New(&textHandler{out: &lockedWriter{w: w}, format: format, level: level, name: "kopf"})
}

// ForObject returns a logger whose records are about one object.
func ForObject(l *slog.Logger, ref string) *slog.Logger {
	return l.With(slog.String(ObjectKey, ref))
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

type textHandler struct {
	out    *lockedWriter
	format Format
	level  slog.Level
	name   string // the logger name in the full format
	object string
	attrs  []slog.Attr
	group  string
}

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	object := h.object
	if object == "" { // the object may be given on the record itself
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == ObjectKey {
				object = a.Value.String()
			}
			return object == ""
		})
	}
	if h.format == Full {
		ts := r.Time
		if ts.IsZero() {
			ts = time.Now()
		}
		name := h.name
		if object != "" {
			name = "kopf.objects"
		}
		fmt.Fprintf(&b, "[%s] %-20.20s [%-8.8s] ", ts.Format("2006-01-02 15:04:05,000"), name, levelName(r.Level))
	}
	if object != "" {
		b.WriteString("[" + object + "] ")
	}
	b.WriteString(r.Message)
	extra := func(a slog.Attr) bool {
		if a.Key == ObjectKey {
			return true // printed as the prefix
		}
		if a.Key == "stack" {
			b.WriteString("\n" + strings.TrimRight(a.Value.String(), "\n"))
			return true
		}
		b.WriteString(" " + a.Key + "=" + fmt.Sprint(a.Value.Any()))
		return true
	}
	for _, a := range h.attrs {
		if a.Key != ObjectKey {
			extra(a)
		}
	}
	r.Attrs(extra)
	b.WriteByte('\n')
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	_, err := io.WriteString(h.out.w, b.String())
	return err
}

func (h *textHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	for _, a := range attrs {
		if a.Key == ObjectKey {
			c.object = a.Value.String()
		}
	}
	return &c
}

func (h *textHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.group = name
	return &c
}

func levelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	default:
		return "DEBUG"
	}
}

// RouteKlog sends klog's output (client-go's and apimachinery's own log
// lines) through the logger, so that it comes out in the operator's format
// (`--log-format json` stays JSON line by line) and level: klog's errors at
// ERROR, its informational lines at INFO, its verbose ones (when klog's own
// -v allows them) at DEBUG and below.
//
// klog is process-wide: the last call wins, for every goroutine. Call it
// once, where the process builds its logger (the operator binary does, in
// package cli); libraries and operator.Run do not, and client-go's lines
// about the operator's own watches reach the operator's logger without it.
func RouteKlog(l *slog.Logger) {
	klog.SetSlogLogger(l)
}
