package causes

// Reason is why a changing handler is invoked: the cause of the cycle.
// The values are Kopf's, and are persisted as the "purpose" of progress
// records, so they must never change.
type Reason string

// The reasons of changing handlers.
const (
	Create Reason = "create"
	Update Reason = "update"
	Delete Reason = "delete"
	Resume Reason = "resume"
	// Noop is a change that handlers are not interested in.
	Noop Reason = "noop"
	// Free and Gone are deletions that need no handlers: the object is
	// being deleted without our finalizer, or is already deleted.
	Free Reason = "free"
	Gone Reason = "gone"
)

// Title returns the capitalised name of the cause in the reactor's log
// lines, Kopf's TITLES capitalised: "Creation", "Updating", "Deletion",
// "Resuming" (as in "Updating is in progress: ...", "Updating diff: ...",
// "Updating is processed: ..."). Other reasons return their value.
func (r Reason) Title() string {
	switch r {
	case Create:
		return "Creation"
	case Update:
		return "Updating"
	case Delete:
		return "Deletion"
	case Resume:
		return "Resuming"
	default:
		return string(r)
	}
}
