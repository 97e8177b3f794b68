package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// ErrNoCredentials is Login's error when no login handler returned
// credentials (Kopf's "no credentials were retrieved from the login
// handlers").
var ErrNoCredentials = errors.New("no credentials were retrieved from the login handlers")

// Login runs the login handlers (Kopf's authentication activity) and
// returns the credentials of the highest priority, the first registered
// among equals: a copy of its Config, which the caller may change. A
// handler's result must be a *registry.ConnectionInfo with a Config.
func Login(ctx context.Context, handlers []*registry.ActivityHandler, base kwargs.Activity) (*rest.Config, error) {
	info, err := LoginInfo(ctx, handlers, base)
	if err != nil {
		return nil, err
	}
	return info.Config, nil
}

// LoginInfo is Login returning the whole ConnectionInfo of the
// credentials chosen, with a copy of its Config.
func LoginInfo(ctx context.Context, handlers []*registry.ActivityHandler, base kwargs.Activity) (*registry.ConnectionInfo, error) {
	base.Activity = causes.ActivityAuthentication
	results, err := Run(ctx, handlers, base)
	if err != nil {
		return nil, err
	}
	var best *registry.ConnectionInfo
	for _, h := range handlers {
		result, ok := results[h.ID]
		if !ok {
			continue
		}
		info, ok := result.(*registry.ConnectionInfo)
		switch {
		case !ok:
			return nil, fmt.Errorf("login handler %q returned %T, not *kopf.ConnectionInfo", h.ID, result)
		case info.Config == nil:
			return nil, fmt.Errorf("login handler %q returned a ConnectionInfo without a Config", h.ID)
		case best == nil || info.Priority > best.Priority:
			best = info
		}
	}
	if best == nil {
		return nil, ErrNoCredentials
	}
	info := *best
	info.Config = rest.CopyConfig(best.Config)
	return &info, nil
}

// ClientLoginFunc loads the credentials as the operator would without
// login handlers: from its command line's --kubeconfig, from the
// configuration it was given in code, or as kubectl finds them.
type ClientLoginFunc func(ctx context.Context) (*rest.Config, error)

type clientLoginKey struct{}

// WithClientLogin returns ctx carrying the operator's own way to load the
// credentials, for LoginViaClient in login handlers.
func WithClientLogin(ctx context.Context, fn ClientLoginFunc) context.Context {
	return context.WithValue(ctx, clientLoginKey{}, fn)
}

// LoginViaClient is the operator's built-in login as a login handler
// (Kopf's login_via_client): the credentials that the operator would use
// without login handlers — the command line's --kubeconfig or the
// configuration given in code (kopf.WithConfig), else as kubectl finds
// them ($KUBECONFIG, ~/.kube/config, then the in-cluster service account,
// see LoadConfig). Login handlers call it to log in as usual and add to
// it, or to fall back to it. Like Kopf's (whose client has no notion of a
// context's namespace), it gives no DefaultNamespace.
func LoginViaClient(ctx context.Context, kw kwargs.Activity) (*registry.ConnectionInfo, error) {
	load, _ := ctx.Value(clientLoginKey{}).(ClientLoginFunc)
	if load == nil {
		load = func(context.Context) (*rest.Config, error) { return LoadConfig("") }
	}
	cfg, err := load(ctx)
	if err != nil {
		return nil, err
	}
	return &registry.ConnectionInfo{Config: cfg}, nil
}

// serviceAccountNamespace is the pod's namespace, beside its service
// account's token.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// LoginWithServiceAccount logs in with the pod's service account (Kopf's
// login_with_service_account): its token, its CA and the API server of
// $KUBERNETES_SERVICE_HOST, with client-go's rest.InClusterConfig, and the
// pod's namespace as the DefaultNamespace, as Kopf's. Outside a pod it
// returns no credentials and no error, as Kopf's does.
func LoginWithServiceAccount(_ context.Context, _ kwargs.Activity) (*registry.ConnectionInfo, error) {
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &registry.ConnectionInfo{Config: cfg, DefaultNamespace: namespaceIn(serviceAccountNamespace)}, nil
}

// namespaceIn is the namespace written in the file at path, "" if none.
func namespaceIn(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// LoadConfig finds the cluster's credentials as kubectl does: an explicit
// kubeconfig path, else $KUBECONFIG and ~/.kube/config, then the
// in-cluster service account.
func LoadConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err == nil {
		return cfg, nil
	}
	if kubeconfig == "" && clientcmd.IsEmptyConfig(err) {
		if inCluster, icErr := rest.InClusterConfig(); icErr == nil {
			return inCluster, nil
		}
	}
	return nil, fmt.Errorf("loading the cluster's credentials: %w", err)
}
