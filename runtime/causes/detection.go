// Package causes decides why an object is being processed: the cause of a
// cycle, exactly as Kopf decides it, from the object, its stored diff-base
// and what the reactor remembers of it.
package causes

import (
	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/progress"
)

// Input is what cause detection looks at.
type Input struct {
	Body     body.Body
	DiffBase progress.DiffBaseStorage
	// ExtraFields are the field paths that handlers watch beyond the
	// default essence (field= of field handlers).
	ExtraFields [][]string
	// Deleting: the object has a deletionTimestamp and our finalizer.
	Deleting bool
	// NoticedByListing: the object was seen in the operator's first
	// listing; Resumed: its resume handlers are done in this process.
	NoticedByListing bool
	Resumed          bool
}

// Detected is the cause of a changing cycle.
type Detected struct {
	Reason Reason
	// Resuming: resume handlers are to be mixed into this cycle.
	Resuming bool
	// Essence is the object's current essence: the diff-base to store once
	// the cause is handled.
	Essence map[string]any
	// Old and New are the stored and the current essence (Old is nil on
	// creation); Diff is between them.
	Old, New any
	Diff     diffs.Diff
}

// Detect returns the changing cause of the object. A malformed diff-base is
// reported to onMalformed and treated as absent.
func Detect(in Input, onMalformed func(error)) Detected {
	essence := in.DiffBase.Build(in.Body, in.ExtraFields)
	d := Detected{Essence: essence, New: essence}
	d.Resuming = in.NoticedByListing && !in.Resumed
	old, err := in.DiffBase.Fetch(in.Body)
	if err != nil {
		onMalformed(err)
		old = nil
	}
	if old != nil {
		d.Old = old
	}
	// As Kopf: on creation, one "add" of the whole essence, so that field
	// handlers see their field appear.
	if old != nil {
		d.Diff = diffs.Compute(old, essence)
	} else {
		d.Diff = diffs.Compute(nil, essence)
	}
	switch {
	case in.Deleting:
		d.Reason = Delete
	case old == nil:
		d.Reason = Create
		d.Resuming = false // creation never mixes with resuming (as in Kopf)
	case len(d.Diff) == 0 && d.Resuming:
		d.Reason = Resume
	case len(d.Diff) == 0:
		d.Reason = Noop
	default:
		d.Reason = Update
	}
	return d
}
