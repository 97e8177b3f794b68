package kwargs

import (
	"log/slog"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Activity are the arguments of the operator-wide handlers that serve no
// object (Kopf's activity kwargs): startup, cleanup, login and probe
// handlers. There is no typed form: activities have no object.
type Activity struct {
	// Activity is the occasion of the call: startup, cleanup,
	// authentication (login handlers) or probe.
	Activity causes.Activity
	// Settings are the operator's settings, the same *Settings the
	// operator reads. Startup handlers may change them (Kopf's
	// settings.posting.level = ...): the operator reads them only after
	// every startup handler has succeeded. Other activities must only
	// read them: the operator is running then.
	Settings *settings.Settings
	// Memo is the operator's memo itself (see kopf.WithMemo), shared by
	// every activity; each object's handlers get a shallow copy of it,
	// made when the object is first seen, so what startup handlers store
	// in it is in every object's memo. Probe handlers run while the
	// operator serves objects: what they share through it must be safe for
	// concurrent use.
	Memo Memo
	// Logger logs messages about the activity (Kopf's logger of the
	// activity, kopf.activities.<activity>).
	Logger *slog.Logger
	// Param is the handler's param= option, as registered.
	Param any
	// Retry counts the previous attempts of this handler in this run of
	// the activity.
	Retry int
	// Started is when the activity started (the handler's first attempt
	// for a handler that runs alone).
	Started time.Time
	// Runtime is how long the handler has been attempted so far.
	Runtime time.Duration
}
