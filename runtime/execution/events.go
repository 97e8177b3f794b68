package execution

import (
	"context"
	"fmt"
	"log/slog"

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
	_, err := Guard(func() (struct{}, error) { return struct{}{}, h.Fn(ctx, kw) })
	if err != nil {
		logger.Error(fmt.Sprintf("%s failed with an exception and will ignore it: %s", name, err))
		LogPanicStack(logger, err)
		return err
	}
	logger.Info(name + " succeeded.")
	return nil
}
