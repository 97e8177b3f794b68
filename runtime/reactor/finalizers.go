package reactor

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
)

// requiresFinalizer reports whether any handler needs the object to stay
// until it has run on deletion: a non-optional delete handler.
func (r *Reactor) requiresFinalizer(src kwSource, logger *slog.Logger) bool {
	kw := &asDeletion{src: src}
	for _, h := range r.Registry.ChangingHandlers(r.Resource, causes.Delete) {
		if !h.Optional && r.matches(h, kw, logger) {
			return true
		}
	}
	return false
}

func (r *Reactor) addFinalizer(ctx context.Context, b body.Body, finalizer string) (string, error) {
	var op map[string]any
	if _, ok := b.Meta()["finalizers"]; ok {
		op = map[string]any{"op": "add", "path": "/metadata/finalizers/-", "value": finalizer}
	} else {
		op = map[string]any{"op": "add", "path": "/metadata/finalizers", "value": []string{finalizer}}
	}
	return r.jsonPatch(ctx, b, []map[string]any{op})
}

func (r *Reactor) removeFinalizer(ctx context.Context, b body.Body, finalizer string) (string, error) {
	for i, f := range b.Meta().Finalizers() {
		if f == finalizer {
			path := fmt.Sprintf("/metadata/finalizers/%d", i)
			return r.jsonPatch(ctx, b, []map[string]any{
				{"op": "test", "path": path, "value": finalizer},
				{"op": "remove", "path": path},
			})
		}
	}
	return "", nil
}
