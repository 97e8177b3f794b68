package model

import (
	"go/ast"
	"go/types"

	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/registry"
)

// Activity handlers (on.startup, on.cleanup, on.login, on.probe) serve
// no resource: their markers have no positional argument, their
// registrations no selector and no filters, and their kwargs are
// kopf.ActivityKwargs, never typed.

// IsActivity reports whether handlers of the kind are activity handlers
// (Activity or Login).
func (k Kind) IsActivity() bool { return k == Activity || k == Login }

// activityOf returns the activity of an activity marker.
func activityOf(marker string) causes.Activity {
	switch marker {
	case markers.OnStartup:
		return causes.ActivityStartup
	case markers.OnCleanup:
		return causes.ActivityCleanup
	case markers.OnLogin:
		return causes.ActivityAuthentication
	default:
		return causes.ActivityProbe
	}
}

// activityRegistration builds the registration of one activity marker.
func (b *builder) activityRegistration(h *Handler, m *markers.Marker) (*Registration, bool) {
	r := &Registration{
		Handler:  h,
		Pos:      m.Pos,
		ID:       registry.DefaultID(h.Func),
		Activity: activityOf(m.Name),
		Markers:  []string{m.String()},
	}
	ok := true
	for _, a := range m.Args {
		if r.setCommonOption(a) {
			continue
		}
		switch a.Name {
		default:
			b.errorf(a.NamePos, "argument %s of %s%s is not supported by this kopf-gen", a.Name, markers.Prefix, m.Name)
			ok = false
		}
	}
	return r, ok
}

// isConnectionInfo reports whether e is *kopf.ConnectionInfo (that is,
// *registry.ConnectionInfo, which the facade aliases).
func (b *builder) isConnectionInfo(e ast.Expr) bool {
	ptr, ok := types.Unalias(b.typeOf(e)).(*types.Pointer)
	return ok && isNamed(ptr.Elem(), "github.com/kopf-go/kopf/runtime/registry", "ConnectionInfo")
}

// target names what a registration serves, for messages: its resource, or
// its activity ("the startup activity").
func target(r *Registration) string {
	if r.Handler.Kind.IsActivity() {
		return "the " + string(r.Activity) + " activity"
	}
	return selectorString(r.Selector)
}
