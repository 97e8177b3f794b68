package kopf

import (
	"context"

	"github.com/kopf-go/kopf/runtime/activities"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// Activities: the operator-wide handlers that serve no object (Kopf's
// @kopf.on.startup, on.cleanup, on.login and on.probe); docs/activities.md.

type (
	// ActivityKwargs are the arguments of startup, cleanup, login and
	// probe handlers.
	ActivityKwargs = kwargs.Activity
	// ActivityHandler is an activity handler's registration.
	ActivityHandler = registry.ActivityHandler
	// ActivityFn is the function behind an activity handler.
	ActivityFn = registry.ActivityFn
	// Activity names an activity: ActivityStartup, ActivityCleanup,
	// ActivityAuthentication (login handlers) or ActivityProbe.
	Activity = causes.Activity
	// ConnectionInfo is what a login handler returns: a client-go
	// configuration, its priority, default namespace and expiration
	// (Kopf's kopf.ConnectionInfo).
	ConnectionInfo = registry.ConnectionInfo
)

// The activities.
const (
	ActivityStartup        = causes.ActivityStartup
	ActivityCleanup        = causes.ActivityCleanup
	ActivityAuthentication = causes.ActivityAuthentication
	ActivityProbe          = causes.ActivityProbe
)

// ActivityFunc adapts a startup, cleanup or probe handler of
// ActivityKwargs.
func ActivityFunc(fn func(context.Context, ActivityKwargs) (any, error)) ActivityFn {
	return registry.ActivityFunc(fn)
}

// LoginFunc adapts a login handler, which returns its credentials (nil:
// none from this handler).
func LoginFunc(fn func(context.Context, ActivityKwargs) (*ConnectionInfo, error)) ActivityFn {
	return registry.LoginFunc(fn)
}

// LoginViaClient is the operator's built-in login, for login handlers
// that log in as usual and add to it (Kopf's kopf.login_via_client): the
// credentials that the operator uses without login handlers — the
// command line's --kubeconfig or WithConfig's configuration, else
// $KUBECONFIG, ~/.kube/config, then the in-cluster service account.
func LoginViaClient(ctx context.Context, kw ActivityKwargs) (*ConnectionInfo, error) {
	return activities.LoginViaClient(ctx, kw)
}

// LoginWithServiceAccount logs in with the pod's service account (Kopf's
// kopf.login_with_service_account); outside a pod it returns no
// credentials and no error.
func LoginWithServiceAccount(ctx context.Context, kw ActivityKwargs) (*ConnectionInfo, error) {
	return activities.LoginWithServiceAccount(ctx, kw)
}
