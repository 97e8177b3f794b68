package logging

import (
	"context"
	"log/slog"
)

type loggerKey struct{}

// WithLogger returns ctx carrying the logger of the object being
// processed, for what is logged about the requests made with ctx: the
// reactor's retries, and the API server's warnings in responses to the
// handlers' own clients.
func WithLogger(ctx context.Context, logger *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, logger)
}

// FromContext returns the logger that WithLogger put into ctx, or
// fallback.
func FromContext(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	if ctx != nil {
		if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok && l != nil {
			return l
		}
	}
	return fallback
}
