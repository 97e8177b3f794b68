package clusters

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// The defaults of SecretOptions.
const (
	// DefaultSecretKey is the key of a Secret's data that holds the
	// kubeconfig (Cluster API's and multicluster-runtime's "value" aside,
	// the name most tools write).
	DefaultSecretKey = "kubeconfig"
	// NameAnnotation, on a Secret, names its cluster instead of the
	// Secret's own name.
	NameAnnotation = "kopf.dev/cluster-name"
)

// SecretOptions tune KubeconfigSecrets.
type SecretOptions struct {
	// Key is the key of the Secrets' data that holds the kubeconfig
	// (default DefaultSecretKey, "kubeconfig").
	Key string
	// Logger receives the clusters engaged and disengaged and the Secrets
	// skipped (nil: slog.Default()).
	Logger *slog.Logger
}

// KubeconfigSecrets returns a Provider of one cluster per Secret in the
// namespace of the home cluster (home: its client configuration) that the
// label selector selects ("" selects every Secret of the namespace).
//
// The cluster of a Secret: its name is the Secret's annotation
// NameAnnotation (kopf.dev/cluster-name) if set, else the Secret's name;
// its Config is the current context of the kubeconfig in the Secret's data
// under SecretOptions.Key (FromKubeconfig: a kubeconfig whose certificates
// and keys are inline, as relative paths mean nothing here).
//
// Run checks at its start that it may list the Secrets (an error is Run's
// error: a namespace it may not read, a bad selector) and then watches
// them (a client-go informer: its relists and re-watches are client-go's):
// a Secret added is engaged, a Secret whose kubeconfig changed is engaged
// again with its new Config (Sink.Engage's rule; other changes, of its
// labels or annotations but the name, do nothing), a Secret deleted or no
// longer selected is disengaged. A Secret without the key or whose
// kubeconfig is bad is logged (its namespace/name and the cause, once per
// content) and skipped: a cluster engaged from it before stays engaged
// with its last good Config. Of two Secrets naming one cluster, the first
// by name is used and the other skipped.
//
// RBAC: the operator's ServiceAccount needs get, list and watch of Secrets
// in that namespace, which the role that kopf-gen generates does not
// grant: add a marker to the operator's package, e.g. for the namespace
// fleet (a Role there, to bind with a RoleBinding)
//
//	// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch,namespace=fleet
//
// or, in kopf-gen's grammar,
//
//	//kopf:rbac groups=[""] resources=[secrets] verbs=[get, list, watch] namespace=fleet
//
// (see docs/multicluster.md).
func KubeconfigSecrets(home *rest.Config, namespace, selector string, opts SecretOptions) Provider {
	if opts.Key == "" {
		opts.Key = DefaultSecretKey
	}
	opts.Logger = logger(opts.Logger)
	return &secretsProvider{home: home, namespace: namespace, selector: selector, opts: opts}
}

type secretsProvider struct {
	home      *rest.Config
	namespace string
	selector  string
	opts      SecretOptions
}

// Run implements Provider.
func (p *secretsProvider) Run(ctx context.Context, sink Sink) error {
	if _, err := labels.Parse(p.selector); err != nil {
		return fmt.Errorf("clusters: the selector of the kubeconfig Secrets: %w", err)
	}
	client, err := corev1client.NewForConfig(p.home)
	if err != nil {
		return fmt.Errorf("clusters: a client of the home cluster: %w", err)
	}
	secrets := client.Secrets(p.namespace)
	if _, err := secrets.List(ctx, metav1.ListOptions{LabelSelector: p.selector, Limit: 1}); err != nil {
		return fmt.Errorf("clusters: listing the kubeconfig Secrets in %s: %w", p.namespace, err)
	}
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	store, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = p.selector
				return secrets.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = p.selector
				return secrets.Watch(ctx, o)
			},
		},
		ObjectType: &corev1.Secret{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { notify() },
			UpdateFunc: func(any, any) { notify() },
			DeleteFunc: func(any) { notify() },
		},
	})
	go informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil // ctx is done
	}
	e := newEngaged(sink, p.opts.Logger)
	bad := map[string]string{} // namespace/name → the hash logged as bad
	for {
		e.sync(ctx, p.wanted(store.List(), e, bad))
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}

// wanted is the clusters of the Secrets: those of good kubeconfigs, and
// those engaged already of bad ones (kept as they are).
func (p *secretsProvider) wanted(objs []any, e *engaged, bad map[string]string) map[string]wanted {
	byName := map[string]*corev1.Secret{}
	for _, o := range objs {
		s, ok := o.(*corev1.Secret)
		if !ok {
			continue
		}
		name := s.Name
		if n := s.Annotations[NameAnnotation]; n != "" {
			name = n
		}
		if other, ok := byName[name]; ok && other.Name < s.Name {
			p.skip(bad, s, "-", fmt.Errorf("its cluster name %q is the Secret %s's already", name, other.Name))
			continue
		} else if ok {
			p.skip(bad, other, "-", fmt.Errorf("its cluster name %q is the Secret %s's already", name, s.Name))
		}
		byName[name] = s
	}
	want := map[string]wanted{}
	for name, s := range byName {
		data, ok := s.Data[p.opts.Key]
		sum := sha256.Sum256(data)
		version := hex.EncodeToString(sum[:])
		var cfg *rest.Config
		err := fmt.Errorf("it has no data under the key %q", p.opts.Key)
		if ok {
			cfg, err = FromKubeconfig(data, "")
		}
		if err != nil {
			p.skip(bad, s, version, err)
			if v, ok := e.version(name); ok {
				want[name] = wanted{version: v}
			}
			continue
		}
		delete(bad, s.Namespace+"/"+s.Name)
		want[name] = wanted{cluster: Cluster{Name: name, Config: cfg}, version: version}
	}
	return want
}

// skip logs a bad Secret, once for each of its contents.
func (p *secretsProvider) skip(bad map[string]string, s *corev1.Secret, version string, err error) {
	key := s.Namespace + "/" + s.Name
	if bad[key] == version {
		return
	}
	bad[key] = version
	p.opts.Logger.Error(fmt.Sprintf("The kubeconfig Secret %s is skipped: %v", key, err))
}
