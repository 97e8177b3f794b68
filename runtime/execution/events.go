package execution

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// ExecuteEvent runs an event-watching handler once. Its errors and panics
// are logged and ignored, as Kopf does for on.event handlers: there are no
// retries and no persisted state.
func ExecuteEvent(ctx context.Context, h *registry.EventHandler, kw *kwargs.Event, logger *slog.Logger) error {
	name := fmt.Sprintf("Handler '%s'", h.ID)
	kw.Param = h.Param
	logger.Debug(name + " is invoked.")
	err := func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = &PanicError{Value: v, Stack: debug.Stack()}
			}
		}()
		return h.Fn(ctx, kw)
	}()
	if err != nil {
		logger.Error(fmt.Sprintf("%s failed with an exception and will ignore it: %s", name, err), errorAttrs(err)...)
		return err
	}
	logger.Info(name + " succeeded.")
	return nil
}
