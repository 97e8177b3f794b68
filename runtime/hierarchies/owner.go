package hierarchies

import (
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf/runtime/body"
)

// Owner is what children are adopted by: the identity that an owner
// reference names (APIVersion, Kind, Name, UID), and the namespace and
// labels that Adopt gives the children. Make it with OwnerOfBody, OwnerOf
// or OwnerOfKind, or fill it by hand.
type Owner struct {
	APIVersion string
	Kind       string
	Name       string
	UID        types.UID
	// Namespace is empty for a cluster-scoped owner.
	Namespace string
	// Labels are the labels that Adopt copies to the children.
	Labels map[string]string
}

// OwnerOfBody returns the owner of an object as the operator sees it: a
// handler's kw.Body (Kopf's owner=body). Missing parts stay empty.
func OwnerOfBody(b body.Body) Owner {
	m := b.Meta()
	return Owner{
		APIVersion: b.APIVersion(),
		Kind:       b.Kind(),
		Name:       m.Name(),
		UID:        types.UID(m.UID()),
		Namespace:  m.Namespace(),
		Labels:     m.Labels(),
	}
}

// OwnerOf returns the owner of a typed or unstructured object, whose
// apiVersion and kind are its own (its TypeMeta, set in the objects that
// typed handlers get as kw.Object, but empty in those that client-go's
// typed clients return: use OwnerOfKind for them).
func OwnerOf(obj metav1.Object) Owner {
	var gvk schema.GroupVersionKind
	if o, ok := obj.(interface{ GetObjectKind() schema.ObjectKind }); ok {
		gvk = o.GetObjectKind().GroupVersionKind()
	}
	return OwnerOfKind(obj, gvk)
}

// OwnerOfKind returns the owner of a typed object of the given apiVersion
// and kind, such as v1.SchemeGroupVersion.WithKind("KopfExample").
func OwnerOfKind(obj metav1.Object, gvk schema.GroupVersionKind) Owner {
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	return Owner{
		APIVersion: apiVersion,
		Kind:       kind,
		Name:       obj.GetName(),
		UID:        obj.GetUID(),
		Namespace:  obj.GetNamespace(),
		Labels:     maps.Clone(obj.GetLabels()),
	}
}

// Reference returns the owner reference to the owner, with Kopf's defaults
// (controller and blockOwnerDeletion both true) or the options.
func (o Owner) Reference(opts ...OwnerReferenceOption) metav1.OwnerReference {
	c := config{controller: true, blockOwnerDeletion: true}
	for _, opt := range opts {
		opt.applyToOwnerReference(&c)
	}
	return o.reference(c)
}

func (o Owner) reference(c config) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         o.APIVersion,
		Kind:               o.Kind,
		Name:               o.Name,
		UID:                o.UID,
		Controller:         &c.controller,
		BlockOwnerDeletion: &c.blockOwnerDeletion,
	}
}

// checkReferable returns an error unless an owner reference can be made of
// the owner: the API server requires all four of its identifying fields.
func (o Owner) checkReferable() error {
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"apiVersion", o.APIVersion}, {"kind", o.Kind}, {"name", o.Name}, {"uid", string(o.UID)},
	} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	hint := ""
	if o.Kind == "" {
		hint = " (for a typed object without its TypeMeta, use OwnerOfKind)"
	}
	return &OwnerError{Missing: missing, hint: hint}
}

// OwnerError says which of the owner's fields that an owner reference
// needs are empty.
type OwnerError struct {
	Missing []string // "apiVersion", "kind", "name", "uid"
	hint    string
}

func (e *OwnerError) Error() string {
	return "the owner has no " + strings.Join(e.Missing, ", ") + ": an owner reference needs its apiVersion, kind, name and uid" + e.hint
}
