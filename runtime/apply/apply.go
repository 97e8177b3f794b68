package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kopf-go/kopf/runtime/apiserver"
	"github.com/kopf-go/kopf/runtime/settings"
)

// FieldManager is the operator's field owner in server-side apply: the
// default of Apply and ApplyStatus, and the manager of the runtime's own
// applies (the admission webhooks' configurations).
const FieldManager = settings.FieldManager

// Option is an option of Apply and ApplyStatus.
type Option func(*options)

type options struct {
	fieldOwner    string
	force         bool
	conflictDelay time.Duration
	noRetry       bool
}

// FieldOwner sets the field manager of the apply (FieldManager by
// default): controller-runtime's client.FieldOwner.
func FieldOwner(name string) Option { return func(o *options) { o.fieldOwner = name } }

// ForceOwnership takes the fields that other managers own instead of
// failing with a conflict: apply's force, controller-runtime's
// client.ForceOwnership. Off by default.
func ForceOwnership() Option { return func(o *options) { o.force = true } }

// ConflictDelay is the delay of the retry that a conflict asks for (0 by
// default: Kopf's default delay of a TemporaryError).
func ConflictDelay(d time.Duration) Option { return func(o *options) { o.conflictDelay = d } }

// ConflictNotRetried makes a conflict a plain *ConflictError, not a
// TemporaryError: the handler's errors mode decides (errors=permanent
// fails it at once).
func ConflictNotRetried() Option { return func(o *options) { o.noRetry = true } }

func resolve(opts []Option) options {
	o := options{fieldOwner: FieldManager}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Apply applies obj (an apply configuration, *unstructured.Unstructured or
// map[string]any) to its object, created if absent, and returns the object
// as stored. See the package doc for the options and errors.
func Apply(ctx context.Context, obj any, opts ...Option) (*unstructured.Unstructured, error) {
	return apply(ctx, obj, resolve(opts))
}

// ApplyStatus applies obj to its object's status subresource: only the
// status of obj is applied (the API server ignores the rest there).
func ApplyStatus(ctx context.Context, obj any, opts ...Option) (*unstructured.Unstructured, error) {
	return apply(ctx, obj, resolve(opts), "status")
}

func apply(ctx context.Context, obj any, o options, subresources ...string) (*unstructured.Unstructured, error) {
	target, data, err := Encode(obj)
	if err != nil {
		return nil, err
	}
	a, err := apiserver.Client(ctx, newApplier)
	if err != nil {
		return nil, fmt.Errorf("applying %s: %w", target, err)
	}
	ri, err := a.resource(target)
	if err != nil {
		return nil, fmt.Errorf("applying %s: %w", target, err)
	}
	popts := metav1.PatchOptions{FieldManager: o.fieldOwner, Force: &o.force}
	out, err := ri.Patch(ctx, target.Name, types.ApplyPatchType, data, popts, subresources...)
	if err != nil {
		return nil, classify(target, o, err)
	}
	return out, nil
}

// Target is the object that an apply configuration names.
type Target struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

func (t Target) String() string {
	if t.Namespace == "" {
		return fmt.Sprintf("%s %s", t.GVK.Kind, t.Name)
	}
	return fmt.Sprintf("%s %s/%s", t.GVK.Kind, t.Namespace, t.Name)
}

// Encode serialises obj as the body of an apply patch and reads the
// object it names; an object without apiVersion, kind or name, or a value
// of a type that is not applied (see the package doc), is an error.
func Encode(obj any) (Target, []byte, error) {
	var data []byte
	var err error
	switch v := obj.(type) {
	case *unstructured.Unstructured:
		if v == nil {
			return Target{}, nil, errors.New("applying a nil object")
		}
		data, err = json.Marshal(v.Object)
	case map[string]any:
		data, err = json.Marshal(v)
	case runtime.ApplyConfiguration:
		data, err = json.Marshal(v)
	default:
		return Target{}, nil, fmt.Errorf("applying a %T: not an apply configuration, *unstructured.Unstructured or map[string]any", obj)
	}
	if err != nil {
		return Target{}, nil, fmt.Errorf("encoding the %T to apply: %w", obj, err)
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Target{}, nil, fmt.Errorf("reading the %T to apply: %w", obj, err)
	}
	gv, err := schema.ParseGroupVersion(head.APIVersion)
	if err != nil {
		return Target{}, nil, fmt.Errorf("applying a %T: %w", obj, err)
	}
	t := Target{GVK: gv.WithKind(head.Kind), Namespace: head.Metadata.Namespace, Name: head.Metadata.Name}
	if head.APIVersion == "" || head.Kind == "" || head.Metadata.Name == "" {
		return Target{}, nil, fmt.Errorf("applying a %T: apiVersion, kind and metadata.name are required (got %q, %q, %q)", obj, head.APIVersion, head.Kind, head.Metadata.Name)
	}
	return t, data, nil
}

// applier is the dynamic client and REST mapper that handlers share.
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier(cfg *rest.Config) (*applier, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return &applier{dyn: dyn, mapper: mapper}, nil
}

// resource finds the target's resource, with discovery refreshed once
// (Reset invalidates the cache) if its kind is not known (yet).
func (a *applier) resource(t Target) (dynamic.ResourceInterface, error) {
	m, err := a.mapper.RESTMapping(t.GVK.GroupKind(), t.GVK.Version)
	if err != nil {
		a.mapper.Reset()
		if m, err = a.mapper.RESTMapping(t.GVK.GroupKind(), t.GVK.Version); err != nil {
			return nil, fmt.Errorf("finding the resource of %s: %w", t.GVK, err)
		}
	}
	if m.Scope.Name() != "namespace" {
		return a.dyn.Resource(m.Resource), nil
	}
	if t.Namespace == "" {
		return nil, fmt.Errorf("%s is namespaced: metadata.namespace is required", m.Resource.GroupResource())
	}
	return a.dyn.Resource(m.Resource).Namespace(t.Namespace), nil
}
