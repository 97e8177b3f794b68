// Package activities has activity handlers (Kopf's 13-hooks): every
// option of the four markers, both result forms, stacked markers, and a
// login handler.
package activities

import (
	"context"
	"time"

	"github.com/kopf-go/kopf"
)

// StartupFn returns only an error.
//
//kopf:on.startup
func StartupFn(ctx context.Context, kw StartupFnKwargs) error { return nil }

// Retried shows every option.
//
//kopf:on.startup id=retried param=p errors=permanent timeout=1m retries=3 backoff=1.5
func Retried(ctx context.Context, kw RetriedKwargs) (any, error) {
	if kw.Retry < 3 {
		return nil, kopf.NewTemporaryError("Going to succeed in 1s", time.Second)
	}
	return nil, nil
}

// Hook runs at both ends of the operator's life.
//
//kopf:on.startup
//kopf:on.cleanup
func Hook(ctx context.Context, kw HookKwargs) error { return nil }

// LoginFn returns the credentials.
//
//kopf:on.login errors=permanent
func LoginFn(ctx context.Context, kw LoginFnKwargs) (*kopf.ConnectionInfo, error) {
	return kopf.LoginViaClient(ctx, kw)
}

// Count is a probe with a result.
//
//kopf:on.probe id=count
func Count(ctx context.Context, kw CountKwargs) (any, error) { return 1, nil }

// Pods is a probe of a result of its own type, as Kopf's probes return
// any value: kopf.AnyResult adapts it.
//
//kopf:on.probe
func Pods(ctx context.Context, kw PodsKwargs) (int, error) { return 3, nil }
