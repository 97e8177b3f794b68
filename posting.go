package kopf

import (
	"context"

	"github.com/kopf-go/kopf/runtime/posting"
)

// Kubernetes Events about objects, as Kopf's kopf.event(), kopf.info(),
// kopf.warn() and kopf.exception(). They post through the Poster that the
// operator puts into the handlers' context; each returns at once (the
// event is sent in the background, and failures are only logged), and does
// nothing when the context has no Poster or posting is disabled in the
// settings. See package runtime/posting for the exact format.

// Poster posts Kubernetes Events in the background.
type Poster = posting.Poster

// Event posts an event of any type and reason about obj (kopf.event),
// regardless of the posting level.
func Event(ctx context.Context, obj Body, typ, reason, message string) {
	posting.Event(ctx, obj, typ, reason, message)
}

// Info posts a "Normal" event about obj (kopf.info), unless the posting
// level is above INFO.
func Info(ctx context.Context, obj Body, reason, message string) {
	posting.Info(ctx, obj, reason, message)
}

// Warn posts a "Warning" event about obj (kopf.warn), unless the posting
// level is above WARNING.
func Warn(ctx context.Context, obj Body, reason, message string) {
	posting.Warn(ctx, obj, reason, message)
}

// Exception posts an "Error" event about obj with err's text as the message
// (kopf.exception), unless the posting level is above ERROR. An empty
// reason becomes the name of err's type. To prefix the message, as Kopf's
// message argument does, wrap the error: fmt.Errorf("Some exception: %w", err).
func Exception(ctx context.Context, obj Body, reason string, err error) {
	posting.Exception(ctx, obj, reason, err)
}
