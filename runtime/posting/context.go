package posting

import (
	"context"
	"strings"

	"github.com/kopf-go/kopf/runtime/body"
)

// posterKey is the context key of the Poster.
type posterKey struct{}

// WithPoster returns a context in which Event, Info, Warn and Exception
// post through p. A nil p makes them do nothing.
func WithPoster(ctx context.Context, p *Poster) context.Context {
	return context.WithValue(ctx, posterKey{}, p)
}

// FromContext returns the context's Poster, or nil if there is none (on
// which every posting method does nothing).
func FromContext(ctx context.Context) *Poster {
	if ctx == nil {
		return nil
	}
	p, _ := ctx.Value(posterKey{}).(*Poster)
	return p
}

// Event posts an event of any type and reason about obj through the
// context's Poster (kopf.event). The message is optional, as Kopf's
// empty default is: none is an empty message, several are joined by spaces.
// It returns at once: the event is sent in the background, and failures are
// only logged. Without a Poster in ctx, or with posting disabled, it does
// nothing.
func Event(ctx context.Context, obj body.Body, typ, reason string, message ...string) {
	FromContext(ctx).Event(obj, typ, reason, strings.Join(message, " "))
}

// Info posts a "Normal" event about obj through the context's Poster
// (kopf.info), unless the posting level is above INFO. See Event.
func Info(ctx context.Context, obj body.Body, reason string, message ...string) {
	FromContext(ctx).Info(obj, reason, strings.Join(message, " "))
}

// Warn posts a "Warning" event about obj through the context's Poster
// (kopf.warn), unless the posting level is above WARNING. See Event.
func Warn(ctx context.Context, obj body.Body, reason string, message ...string) {
	FromContext(ctx).Warn(obj, reason, strings.Join(message, " "))
}

// Exception posts an "Error" event about obj through the context's Poster
// (kopf.exception), unless the posting level is above ERROR: its message
// is the optional message followed by err's text, as Kopf's
// f'{message} {exc}'; an empty reason is replaced as Poster.Exception
// says. See Event.
func Exception(ctx context.Context, obj body.Body, reason string, err error, message ...string) {
	FromContext(ctx).Exception(obj, reason, err, strings.Join(message, " "))
}
