package envtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Environment is a running control plane.
type Environment struct {
	// Config is an admin's (system:masters) client configuration, with a
	// QPS and burst high enough that the test's own requests are never
	// throttled.
	Config *rest.Config
	env    *crenvtest.Environment
	ctrl   *controllers // of WithControllers, or nil
}

// Option changes how Start and StartDetached start the control plane.
type Option func(*options)

type options struct {
	env         *crenvtest.Environment
	crds        []string
	assets      string
	controllers bool
}

// WithCRDs installs the CustomResourceDefinitions found in the files and in
// the directories' *.yaml, *.yml and *.json files (not recursively; other
// kinds of objects in them are ignored) before Start returns, and waits
// until the API server serves them: every version is listed by discovery,
// which happens once the CRD is Established. A path that does not exist is
// an error. It is controller-runtime's CRDInstallOptions.Paths.
func WithCRDs(paths ...string) Option {
	return func(o *options) { o.crds = append(o.crds, paths...) }
}

// WithAssets takes the binaries from dir instead of Assets() (also when
// $KUBEBUILDER_ASSETS is set).
func WithAssets(dir string) Option {
	return func(o *options) { o.assets = dir }
}

// WithAPIServerFlag sets a kube-apiserver command-line flag, named without
// its leading dashes (e.g. "audit-log-path"), replacing envtest's value if
// it sets one.
func WithAPIServerFlag(name, value string) Option {
	return func(o *options) { o.env.ControlPlane.GetAPIServer().Configure().Set(name, value) }
}

// WithEnvironment changes controller-runtime's envtest.Environment before
// it starts, for what the other options do not cover (e.g. webhooks,
// etcd's flags, timeouts).
func WithEnvironment(fn func(*crenvtest.Environment)) Option {
	return func(o *options) { fn(o.env) }
}

// Start starts a fresh control plane on free loopback ports, in temporary
// directories, installs the CRDs of WithCRDs, and stops it when the test
// ends (pass or fail; if it failed, the end of the logs of WithControllers'
// processes is logged first). It fails the test if the binaries are missing (the
// message says how to get them; see Assets) or if the control plane or a
// CRD does not come up.
func Start(t testing.TB, opts ...Option) *Environment {
	t.Helper()
	e, err := StartDetached(opts...)
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() && e.ctrl != nil {
			t.Logf("the test failed; the controllers' logs end with:%s", e.ctrl.logs())
		}
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return e
}

// StartDetached is Start for a program rather than a test: the control
// plane runs until Stop is called. The binaries that `kopf-gen envtest`
// builds also stop when this process dies (they are started with Linux's
// parent-death signal); others only on Stop.
func StartDetached(opts ...Option) (*Environment, error) {
	o := &options{env: &crenvtest.Environment{
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}}
	for _, opt := range opts {
		opt(o)
	}
	if o.assets == "" {
		dir, err := Assets()
		if err != nil {
			return nil, err
		}
		o.assets = dir
	} else if err := checkAssets(o.assets, "WithAssets", fixOptions); err != nil {
		return nil, err
	} else {
		withBinaries(o.env, o.assets)
	}
	if o.controllers {
		if err := checkControllers(o.assets); err != nil {
			return nil, err
		}
	}
	o.env.BinaryAssetsDirectory = o.assets
	if len(o.crds) > 0 {
		o.env.CRDInstallOptions.Paths = append(o.env.CRDInstallOptions.Paths, o.crds...)
		o.env.ErrorIfCRDPathMissing = true
	}
	cfg, err := o.env.Start()
	if err != nil {
		_ = o.env.Stop()
		return nil, err
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	e := &Environment{Config: cfg, env: o.env}
	if o.controllers {
		if e.ctrl, err = startControllers(context.Background(), o.env, cfg, o.assets); err != nil {
			_ = o.env.Stop()
			return nil, err
		}
	}
	return e, nil
}

// Stop stops the control plane (the processes of WithControllers first,
// then kube-apiserver and etcd) and removes its temporary directories.
// Start's cleanup calls it; calling it again does nothing.
func (e *Environment) Stop() error {
	if e.ctrl != nil {
		e.ctrl.stop()
		e.ctrl = nil
	}
	return e.env.Stop()
}

// Envtest returns controller-runtime's envtest.Environment that runs the
// control plane, for what this package does not cover.
func (e *Environment) Envtest() *crenvtest.Environment { return e.env }

// Apply creates the objects of a multi-document YAML or JSON manifest, or
// replaces those that exist, and waits for its CRDs to be served; see the
// package function Apply.
func (e *Environment) Apply(ctx context.Context, manifest []byte) error {
	_, err := Apply(ctx, e.Config, manifest)
	return err
}

// Kubeconfig returns a kubeconfig of an admin (system:masters), for kubectl
// and for operators run as separate processes.
func (e *Environment) Kubeconfig() ([]byte, error) {
	user, err := e.env.AddUser(crenvtest.User{Name: "kopf-admin", Groups: []string{"system:masters"}}, e.Config)
	if err != nil {
		return nil, fmt.Errorf("adding the admin user: %w", err)
	}
	return user.KubeConfig()
}

// WriteKubeconfig writes Kubeconfig to a file, readable by its owner only.
func (e *Environment) WriteKubeconfig(path string) error {
	data, err := e.Kubeconfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// UserConfig returns the client configuration of a user authenticated by a
// client certificate, with no permissions but those that RBAC grants its
// name and groups (and every authenticated user's: discovery), to test an
// operator's RBAC role.
func (e *Environment) UserConfig(name string, groups ...string) (*rest.Config, error) {
	user, err := e.env.AddUser(crenvtest.User{Name: name, Groups: groups}, e.Config)
	if err != nil {
		return nil, fmt.Errorf("adding the user %s: %w", name, err)
	}
	return user.Config(), nil
}

// withBinaries names the binaries of WithAssets' dir in env, unless an
// option named them: controller-runtime's envtest would take them from
// $KUBEBUILDER_ASSETS, when set, rather than from BinaryAssetsDirectory.
func withBinaries(env *crenvtest.Environment, dir string) {
	if api := env.ControlPlane.GetAPIServer(); api.Path == "" {
		api.Path = filepath.Join(dir, "kube-apiserver")
	}
	if env.ControlPlane.Etcd == nil {
		env.ControlPlane.Etcd = &crenvtest.Etcd{}
	}
	if env.ControlPlane.Etcd.Path == "" {
		env.ControlPlane.Etcd.Path = filepath.Join(dir, "etcd")
	}
}
