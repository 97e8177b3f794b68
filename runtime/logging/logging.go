// Package logging renders the operator's log/slog records the way Kopf
// renders its log: the "full" format `[time] logger [LEVEL   ] message`, the
// "plain" format `message`, or Kopf's JSON (one object a line: message,
// timestamp, object, severity). Records about one object carry the
// attribute ObjectKey ("namespace/name", or a Referencer with the object's
// full reference); the text formats print it as the `[namespace/name] `
// prefix of the message, as Kopf does, and JSON puts it in a field of its
// own (Options.Prefix and Options.RefKey change both, as Kopf's
// --log-prefix and --log-refkey do).
//
// The records of one cluster of a fleet operator carry the attribute
// ClusterKey (see ForCluster): the text formats print it as a "[cluster] "
// prefix of the message, before the object's, whatever Options.Prefix
// says; JSON has it as a field, "cluster". The records of a single-cluster
// operator have none.
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

// ClusterKey is the attribute that marks a record as being about one
// cluster of a fleet operator (see package clusters): its name.
const ClusterKey = "cluster"

// Format is a log format: "full", "plain" or "json".
type Format string

// The log formats of Kopf.
const (
	Full  Format = "full"
	Plain Format = "plain"
	JSON  Format = "json"
)

// ParseFormat checks a --log-format value. As Kopf's, it is
// case-insensitive: "JSON" is "json".
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case Full, Plain, JSON:
		return f, nil
	}
	return "", fmt.Errorf("unknown log format %q: expected full, plain or json", s)
}

// DefaultRefKey is the JSON field of the object a record is about, unless
// Options.RefKey says another (Kopf's DEFAULT_JSON_REFKEY).
const DefaultRefKey = "object"

// Options say how a logger writes: the logging options of `kopf run`
// (Kopf's kopf.configure()). The zero Options are the full format at INFO.
type Options struct {
	// Format is the log format; "": Full.
	Format Format
	// Level is the lowest level written (slog.LevelDebug: Kopf's
	// --verbose; slog.LevelWarn: --quiet).
	Level slog.Level
	// Prefix says whether the messages about an object start with
	// "[namespace/name] " ("[name] " for cluster-scoped objects): Kopf's
	// --log-prefix/--no-log-prefix. Nil: Kopf's default, a prefix in the
	// text formats and none in JSON, where the object has a field of its
	// own.
	Prefix *bool
	// RefKey is the JSON field that holds the object a record is about
	// (Kopf's --log-refkey); "": DefaultRefKey, "object". The text formats
	// ignore it.
	RefKey string
}

// New returns a logger writing to w in the given format, from the given
// level up, with Kopf's defaults for the rest (see Options). It is safe for
// concurrent use.
func New(w io.Writer, format Format, level slog.Level) *slog.Logger {
	return NewWith(w, Options{Format: format, Level: level})
}

// NewWith returns a logger writing to w as opts say. It is safe for
// concurrent use.
func NewWith(w io.Writer, opts Options) *slog.Logger {
	if opts.Format == "" {
		opts.Format = Full
	}
	prefix := opts.Format != JSON
	if opts.Prefix != nil {
		prefix = *opts.Prefix
	}
	if opts.Format == JSON {
		refKey := opts.RefKey
		if refKey == "" {
			refKey = DefaultRefKey
		}
		return slog.New(&jsonHandler{out: &lockedWriter{w: w}, level: opts.Level, prefix: prefix, refKey: refKey})
	}
	return slog.New(&textHandler{out: &lockedWriter{w: w}, format: opts.Format, level: opts.Level, prefix: prefix, name: "kopf"})
}

// ForObject returns a logger whose records are about one object.
func ForObject(l *slog.Logger, ref string) *slog.Logger {
	return l.With(slog.String(ObjectKey, ref))
}

// ForCluster returns a logger whose records are about one cluster of a
// fleet operator, named name.
func ForCluster(l *slog.Logger, name string) *slog.Logger {
	return l.With(slog.String(ClusterKey, name))
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

type textHandler struct {
	out     *lockedWriter
	format  Format
	level   slog.Level
	prefix  bool   // "[namespace/name] " before the messages about an object
	name    string // the logger name in the full format
	object  string
	cluster string // "[cluster] " before the message, and before the object's prefix
	attrs   []slog.Attr
	group   string
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
	if h.cluster != "" {
		b.WriteString("[" + h.cluster + "] ")
	}
	if object != "" && h.prefix {
		b.WriteString("[" + object + "] ")
	}
	b.WriteString(r.Message)
	extra := func(a slog.Attr) bool {
		if a.Key == ObjectKey || (a.Key == ClusterKey && h.cluster != "") {
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
		extra(a)
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
		switch a.Key {
		case ObjectKey:
			c.object = a.Value.String()
		case ClusterKey:
			if h.group == "" {
				c.cluster = a.Value.String()
			}
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
