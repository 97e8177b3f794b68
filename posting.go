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
// regardless of the posting level. The message is optional, as Kopf's
// empty default is: none is an empty message, several are joined by spaces.
//
//	kopf.Event(ctx, kw.Body, "SomeType", "SomeReason", "Some message")
func Event(ctx context.Context, obj Body, typ, reason string, message ...string) {
	posting.Event(ctx, obj, typ, reason, message...)
}

// Info posts a "Normal" event about obj (kopf.info), unless the posting
// level is above INFO. The message is optional, as for Event.
//
//	kopf.Info(ctx, kw.Body, "SomeReason", "Some info")
//	kopf.Info(ctx, kw.Body, "Reconciled")
func Info(ctx context.Context, obj Body, reason string, message ...string) {
	posting.Info(ctx, obj, reason, message...)
}

// Warn posts a "Warning" event about obj (kopf.warn), unless the posting
// level is above WARNING. The message is optional, as for Event.
func Warn(ctx context.Context, obj Body, reason string, message ...string) {
	posting.Warn(ctx, obj, reason, message...)
}

// Exception posts an "Error" event about obj (kopf.exception), unless the
// posting level is above ERROR. Its message is the optional message, then
// err's text, as Kopf's f'{message} {exc}'. An empty reason becomes the
// name of err's type (Kopf: the exception's class name), "Error" if err is
// nil. Go has no current exception to default to: pass the error.
//
//	kopf.Exception(ctx, kw.Body, "SomeException", err, "Some exception:")
func Exception(ctx context.Context, obj Body, reason string, err error, message ...string) {
	posting.Exception(ctx, obj, reason, err, message...)
}
