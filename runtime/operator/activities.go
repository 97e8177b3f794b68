package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/activities"
	"github.com/kopf-go/kopf/runtime/apiserver"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// The operator's activities (Kopf's startup_cleanup_activities and
// authenticator, kopf/_core/reactor/running.py): the login handlers first,
// for the credentials, then the startup handlers, before anything is
// watched; the cleanup handlers once everything has stopped; the probe
// handlers whenever the health endpoint asks.

// ProbeFunc runs the operator's probe handlers and returns their results
// by handler id (see activities.Probe): what the health endpoint serves.
type ProbeFunc func(ctx context.Context) (map[string]any, error)

// activityKwargs are the kwargs of an activity's handlers.
func activityKwargs(opts Options, activity causes.Activity) kwargs.Activity {
	return kwargs.Activity{Activity: activity, Settings: opts.Settings, Memo: opts.Memo, Logger: opts.Logger}
}

// credentials returns the credentials to run with, and how to load them
// again (nil: never). With login handlers, they produce them (Kopf's
// initial authentication), and opts.Login becomes them, so that a 401 or
// their expiration runs them again; the operator's own way to load the
// credentials (opts.Login, or cfg as it is) is what
// activities.LoginViaClient returns in them. Without login handlers, cfg
// is used if set, else opts.Login loads it.
func credentials(ctx context.Context, cfg *rest.Config, reg *registry.Registry, opts *Options) (*registry.ConnectionInfo, func(context.Context) (apiserver.Credentials, error), error) {
	handlers := reg.ActivityHandlers(causes.ActivityAuthentication)
	login := opts.Login
	infoOf := func(c *rest.Config, err error) (*registry.ConnectionInfo, error) {
		if c == nil || err != nil {
			return nil, err
		}
		return &registry.ConnectionInfo{Config: c}, nil
	}
	loginInfo := func(ctx context.Context) (*registry.ConnectionInfo, error) { return infoOf(login(ctx)) }
	if len(handlers) == 0 && cfg != nil {
		return &registry.ConnectionInfo{Config: cfg}, reloginOf(login, loginInfo), nil
	}
	if len(handlers) == 0 {
		loginInfo = builtinLogin(loginInfo, opts.Logger, builtinLoginID(os.Getenv, fileExists))
	}
	if len(handlers) > 0 {
		builtin := activities.ClientLoginFunc(opts.Login)
		if builtin == nil && cfg != nil {
			fixed := cfg
			builtin = func(context.Context) (*rest.Config, error) { return fixed, nil }
		}
		base := activityKwargs(*opts, causes.ActivityAuthentication)
		loginInfo = func(ctx context.Context) (*registry.ConnectionInfo, error) {
			if builtin != nil {
				ctx = activities.WithClientLogin(ctx, builtin)
			}
			return activities.LoginInfo(ctx, handlers, base)
		}
		login = func(ctx context.Context) (*rest.Config, error) {
			info, err := loginInfo(ctx)
			if err != nil {
				return nil, err
			}
			return info.Config, nil
		}
		opts.Login = login
	}
	if login == nil {
		return nil, nil, errors.New("no credentials: neither a configuration nor a way to load it (Options.Login) is given")
	}
	logger := opts.Logger
	logger.Info("Initial authentication has been initiated.")
	loaded, err := loginInfo(ctx)
	if err != nil {
		if errors.Is(err, activities.ErrNoCredentials) {
			logger.Warn(fmt.Sprintf("Initial authentication has failed: %v.", err))
		}
		return nil, nil, fmt.Errorf("logging in: %w", err)
	}
	if loaded == nil {
		return nil, nil, errors.New("logging in: no credentials were loaded")
	}
	logger.Info("Initial authentication has finished.")
	return loaded, reloginOf(login, loginInfo), nil
}

// builtinLogin is the operator's built-in login logged as Kopf logs its
// fallback login handler (Kopf's SmartOperatorRegistry without pykube or
// the kubernetes client): "Activity '<id>' is invoked." at debug level and
// "Activity '<id>' succeeded." at info level; a failure is the login's
// error, as before. Kopf's own e2e expectations count that success line
// (tests/e2e/test_examples.py's set(counts) == {1}).
func builtinLogin(loginInfo func(context.Context) (*registry.ConnectionInfo, error), logger *slog.Logger, id string) func(context.Context) (*registry.ConnectionInfo, error) {
	name := fmt.Sprintf("Activity '%s'", id)
	return func(ctx context.Context) (*registry.ConnectionInfo, error) {
		logger.Debug(name + " is invoked.")
		info, err := loginInfo(ctx)
		if err == nil && info != nil {
			logger.Info(name + " succeeded.")
		}
		return info, err
	}
}

// builtinLoginID is the id of Kopf's fallback login handler that the
// built-in login stands for: login_with_kubeconfig where Kopf finds a
// kubeconfig ($KUBECONFIG, or ~/.kube/config), else
// login_with_service_account where a pod's service account is mounted,
// else login_with_kubeconfig (a --kubeconfig given).
func builtinLoginID(getenv func(string) string, exists func(string) bool) string {
	if getenv("KUBECONFIG") != "" {
		return "login_with_kubeconfig"
	}
	if home := getenv("HOME"); home != "" && exists(filepath.Join(home, ".kube", "config")) {
		return "login_with_kubeconfig"
	}
	if exists("/var/run/secrets/kubernetes.io/serviceaccount/token") {
		return "login_with_service_account"
	}
	return "login_with_kubeconfig"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// reloginOf is how the credentials are loaded again: loginInfo's, with
// their expiration; nil without a login.
func reloginOf(login LoginFunc, loginInfo func(context.Context) (*registry.ConnectionInfo, error)) func(context.Context) (apiserver.Credentials, error) {
	if login == nil {
		return nil
	}
	return func(ctx context.Context) (apiserver.Credentials, error) {
		info, err := loginInfo(ctx)
		if info == nil || err != nil {
			return apiserver.Credentials{}, err
		}
		return apiserver.Credentials{Config: info.Config, Expiration: info.Expiration}, nil
	}
}

// activityContext is the context of the startup and cleanup handlers: the
// operator's configuration for their own clients (kopf.RESTConfig,
// kopf.Client), renewed on 401 and at expiration as the operator's (by
// relogin, shared by all of its clients; nil: never), but without its
// in-flight limit, which its settings (still changeable by the startup
// handlers) decide.
func activityContext(ctx context.Context, cfg *rest.Config, relogin *apiserver.Relogin) context.Context {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = UserAgent()
	}
	if relogin != nil {
		cfg.Wrap(relogin.Wrap)
	}
	return apiserver.WithClients(apiserver.WithRESTConfig(ctx, cfg))
}

// startup runs the startup handlers (Kopf's startup activity). ok is
// false if the operator must not go on: err says why, or is nil when ctx
// was cancelled meanwhile (the operator's stop).
func startup(ctx context.Context, reg *registry.Registry, opts Options) (ok bool, err error) {
	handlers := reg.ActivityHandlers(causes.ActivityStartup)
	if len(handlers) == 0 {
		return true, nil
	}
	_, err = activities.Run(ctx, handlers, activityKwargs(opts, causes.ActivityStartup))
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		opts.Logger.Warn("Startup activity is only partially executed due to cancellation.")
		return false, nil
	default:
		return false, err
	}
}

// cleanup runs the cleanup handlers (Kopf's cleanup activity) once the
// operator has stopped, for at most settings.Execution.CleanupTimeout.
// ctx is the operator's, done by now: the handlers get a context of their
// own, with its values.
func cleanup(ctx context.Context, reg *registry.Registry, opts Options) error {
	handlers := reg.ActivityHandlers(causes.ActivityCleanup)
	if len(handlers) == 0 {
		return nil
	}
	timeout := opts.Settings.Execution.CleanupTimeout
	cctx, cancel := context.WithoutCancel(ctx), context.CancelFunc(func() {})
	if timeout > 0 {
		cctx, cancel = context.WithTimeout(cctx, timeout)
	}
	defer cancel()
	_, err := activities.Run(cctx, handlers, activityKwargs(opts, causes.ActivityCleanup))
	switch {
	case err == nil:
		return nil
	case cctx.Err() != nil:
		opts.Logger.Warn(fmt.Sprintf("Cleanup activity is only partially executed due to cancellation: it has not finished in %s seconds (settings.Execution.CleanupTimeout).", execution.Seconds(timeout)))
		return nil
	default:
		return err
	}
}

// objectsMemo returns what each object's memo is a shallow copy of: the
// operator's memo as the startup handlers left it. Kopf copies the memo
// itself when it first sees an object; copying a Go map while an activity
// handler (a probe, a re-login) adds a key to it would crash the
// operator, so the objects' copies are made from this snapshot, which
// nothing writes. The values are the same: only keys added to the
// operator's memo after the startup are not in the objects' memos.
func objectsMemo(memo kwargs.Memo) kwargs.Memo {
	return maps.Clone(memo)
}

// prober returns the function that runs the probe handlers with the
// context of the health endpoint's request and the values of the
// operator's (its configuration, clients and poster), for Options.Prober.
func prober(ctx context.Context, reg *registry.Registry, opts Options) ProbeFunc {
	handlers := reg.ActivityHandlers(causes.ActivityProbe)
	base := activityKwargs(opts, causes.ActivityProbe)
	busy := make(chan struct{}, 1) // one probing at a time, as Kopf's probing_lock
	return func(pctx context.Context) (map[string]any, error) {
		select {
		case busy <- struct{}{}:
			defer func() { <-busy }()
		case <-pctx.Done():
			return nil, pctx.Err()
		}
		return activities.Probe(valuesOf{Context: pctx, values: ctx}, handlers, base)
	}
}

// valuesOf is a context whose deadline and cancellation are its own and
// whose values are its own or, failing that, those of values.
type valuesOf struct {
	context.Context
	values context.Context
}

func (c valuesOf) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.values.Value(key)
}
