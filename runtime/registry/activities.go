package registry

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

// ActivityFn is the function behind an activity handler. The result of a
// startup or cleanup handler is logged nowhere and dropped; a probe
// handler's is reported under its id by the health endpoint; a login
// handler's must be a *ConnectionInfo (or nil: no credentials from this
// handler). LoginFunc adapts login handlers.
type ActivityFn func(ctx context.Context, kw *kwargs.Activity) (any, error)

// ActivityHandler is one handler of an operator-wide activity (Kopf's
// @kopf.on.startup, on.cleanup, on.login, on.probe). Its options mean
// what they mean for changing handlers, within one run of the activity:
// a handler that fails with a TemporaryError, or an arbitrary error under
// ErrorsTemporary, is called again after the delay, until it succeeds or
// its Retries or Timeout are exhausted.
type ActivityHandler struct {
	// ID is the handler's identity in the log ("Activity 'id' succeeded.")
	// and in the probes' results. Unique per activity.
	ID       string
	Activity causes.Activity
	Fn       ActivityFn
	Param    any
	// Errors, Timeout, Retries and Backoff as for ChangingHandler.
	Errors  ErrorsMode
	Timeout time.Duration
	Retries int
	Backoff time.Duration
}

// ConnectionInfo is what a login handler returns (Kopf's
// kopf.ConnectionInfo): how to reach and authenticate to the API server.
// Kopf's fields are those of client-go's rest.Config: server is
// Config.Host, ca_path and ca_data are Config.CAFile and CAData,
// insecure is Config.Insecure, username and password are Config.Username
// and Password, token is Config.BearerToken (or BearerTokenFile),
// certificate_path/data and private_key_path/data are Config.CertFile,
// CertData, KeyFile and KeyData, proxy_url is Config.Proxy; a Config from
// clientcmd (a kubeconfig, exec plugins) works as it is.
type ConnectionInfo struct {
	// Config is the client configuration; required.
	Config *rest.Config
	// Priority ranks the credentials of several login handlers: the
	// operator uses those of the highest priority, the first registered
	// among equals (Kopf's priority=).
	Priority int
	// DefaultNamespace is Kopf's default_namespace: the namespace of the
	// Kubernetes Events about cluster-scoped objects, as of the initial
	// login ("": "default").
	DefaultNamespace string
	// Expiration is when the credentials expire (Kopf's expiration; zero:
	// never). The first request of the operator (or of a handler's client
	// made from its configuration) at or after it runs the login handlers
	// again first, as Kopf does, and is sent with the new credentials
	// (bearer tokens); if the login fails or gives credentials expired
	// too, the requests fail until it succeeds (retried after 1 s, then
	// doubling up to 10 s). docs/activities.md.
	Expiration time.Time
}

// LoginFunc adapts a login handler, which returns its credentials (nil:
// none from this handler), to the registry's function.
func LoginFunc(fn func(context.Context, kwargs.Activity) (*ConnectionInfo, error)) ActivityFn {
	return func(ctx context.Context, kw *kwargs.Activity) (any, error) {
		info, err := fn(ctx, *kw)
		if info == nil {
			return nil, err // no typed nil in the results
		}
		return info, err
	}
}

// ActivityFunc adapts a startup, cleanup or probe handler.
func ActivityFunc(fn func(context.Context, kwargs.Activity) (any, error)) ActivityFn {
	return func(ctx context.Context, kw *kwargs.Activity) (any, error) { return fn(ctx, *kw) }
}

// AddActivity registers an activity handler. Registration order is the
// order of execution within an activity.
func (r *Registry) AddActivity(h ActivityHandler) error {
	if h.ID == "" {
		return fmt.Errorf("activity handler has no id")
	}
	if h.Fn == nil {
		return fmt.Errorf("activity handler %q has no function", h.ID)
	}
	switch h.Activity {
	case causes.ActivityStartup, causes.ActivityCleanup, causes.ActivityAuthentication, causes.ActivityProbe:
	default:
		return fmt.Errorf("activity handler %q has an unknown activity %q", h.ID, h.Activity)
	}
	switch h.Errors {
	case "", ErrorsTemporary, ErrorsPermanent, ErrorsIgnored:
	default:
		return fmt.Errorf("activity handler %q: errors=%q is none of temporary, permanent, ignored", h.ID, h.Errors)
	}
	if h.Timeout < 0 || h.Retries < 0 || h.Backoff < 0 {
		return fmt.Errorf("activity handler %q: timeout, retries and backoff must not be negative", h.ID)
	}
	for _, other := range r.activities {
		if other.ID == h.ID && other.Activity == h.Activity {
			return fmt.Errorf("activity handler %q is registered twice for the %s activity", h.ID, h.Activity)
		}
	}
	r.activities = append(r.activities, &h)
	return nil
}

// ActivityHandlers returns the handlers of an activity, in registration
// order.
func (r *Registry) ActivityHandlers(activity causes.Activity) []*ActivityHandler {
	var out []*ActivityHandler
	for _, h := range r.activities {
		if h.Activity == activity {
			out = append(out, h)
		}
	}
	return out
}
