package hierarchies

import (
	"errors"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppendOwnerReference adds an owner reference to the owner to every child
// that has none with the owner's uid (Kopf's append_owner_reference): the
// API server's garbage collector deletes the children when the owner is
// deleted. The reference is a controller one that blocks the owner's
// deletion, unless Controller(false) or BlockOwnerDeletion(false) say
// otherwise. An existing reference with the same uid is kept as it is.
func AppendOwnerReference(objs any, owner Owner, opts ...OwnerReferenceOption) error {
	c := config{controller: true, blockOwnerDeletion: true}
	for _, opt := range opts {
		opt.applyToOwnerReference(&c)
	}
	if err := owner.checkReferable(); err != nil {
		return err
	}
	children, err := collect(objs, nil)
	if err != nil {
		return err
	}
	appendOwnerReference(children, owner, c)
	return nil
}

// RemoveOwnerReference removes the owner references with the owner's uid
// from every child (Kopf's remove_owner_reference). Only the uid counts.
func RemoveOwnerReference(objs any, owner Owner) error {
	if owner.UID == "" {
		return errors.New("the owner has no uid: owner references are removed by it")
	}
	children, err := collect(objs, nil)
	if err != nil {
		return err
	}
	for _, ch := range children {
		if ch.typed != nil {
			refs := ch.typed.GetOwnerReferences()
			if kept := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return r.UID == owner.UID }); len(kept) != len(refs) {
				ch.typed.SetOwnerReferences(kept)
			}
			continue
		}
		md := ensureTree(ch.m, "metadata")
		refs, _ := md["ownerReferences"].([]any)
		kept := slices.DeleteFunc(refs, func(r any) bool { return refUID(r) == string(owner.UID) })
		if kept == nil {
			kept = []any{} // as Kopf, which leaves an empty list
		}
		md["ownerReferences"] = kept
	}
	return nil
}

// Label adds the labels to every child and to the objects at its nested
// paths (Nested) (Kopf's label). Labels that a child already has are kept,
// unless Forced(true).
func Label(objs any, labels map[string]string, opts ...LabelOption) error {
	var c config
	for _, opt := range opts {
		opt.applyToLabel(&c)
	}
	children, err := collect(objs, c.nested)
	if err != nil {
		return err
	}
	label(children, labels, c.forced)
	return nil
}

// HarmonizeNaming names every child that has no name after the given name
// (Kopf's harmonize_naming): by default, the API server generates its name
// from the prefix name+"-" (metadata.generateName); with Strict(true), the
// name is exactly name (metadata.name). A child with a name or a
// generateName keeps it, unless Forced(true). The name must not be empty.
func HarmonizeNaming(objs any, name string, opts ...NamingOption) error {
	var c config
	for _, opt := range opts {
		opt.applyToNaming(&c)
	}
	if name == "" {
		return errors.New("the name must be set explicitly")
	}
	children, err := collect(objs, nil)
	if err != nil {
		return err
	}
	harmonizeNaming(children, name, c)
	return nil
}

// AdjustNamespace puts every child that has no namespace into the given
// namespace (Kopf's adjust_namespace); with Forced(true), every child.
// An empty namespace (a cluster-scoped owner's) means no namespace.
func AdjustNamespace(objs any, namespace string, opts ...NamespaceOption) error {
	var c config
	for _, opt := range opts {
		opt.applyToNamespace(&c)
	}
	children, err := collect(objs, nil)
	if err != nil {
		return err
	}
	adjustNamespace(children, namespace, c.forced)
	return nil
}

// Adopt makes the children the owner's (Kopf's adopt): an owner reference
// to it (AppendOwnerReference with its defaults), a name after its name
// (HarmonizeNaming with Forced and Strict), its namespace (AdjustNamespace
// with Forced), and its labels (Label with Forced and Nested). Everything
// is checked before the first change: on an error, no child is changed.
func Adopt(objs any, owner Owner, opts ...AdoptOption) error {
	c := config{controller: true, blockOwnerDeletion: true}
	for _, opt := range opts {
		opt.applyToAdopt(&c)
	}
	if err := owner.checkReferable(); err != nil {
		return err
	}
	// Once: an iterator of children may be good for one pass only.
	labelled, err := collect(objs, c.nested)
	if err != nil {
		return err
	}
	children := roots(labelled)
	appendOwnerReference(children, owner, c)
	harmonizeNaming(children, owner.Name, c)
	adjustNamespace(children, owner.Namespace, c.forced)
	label(labelled, owner.Labels, c.forced)
	return nil
}

func appendOwnerReference(children []child, owner Owner, c config) {
	for _, ch := range children {
		if ch.typed != nil {
			refs := ch.typed.GetOwnerReferences()
			if !slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == owner.UID }) {
				ch.typed.SetOwnerReferences(append(refs, owner.reference(c)))
			}
			continue
		}
		md := ensureTree(ch.m, "metadata")
		refs, _ := md["ownerReferences"].([]any)
		if refs == nil {
			refs = []any{}
		}
		if !slices.ContainsFunc(refs, func(r any) bool { return refUID(r) == string(owner.UID) }) {
			refs = append(refs, map[string]any{
				"controller":         c.controller,
				"blockOwnerDeletion": c.blockOwnerDeletion,
				"apiVersion":         owner.APIVersion,
				"kind":               owner.Kind,
				"name":               owner.Name,
				"uid":                string(owner.UID),
			})
		}
		md["ownerReferences"] = refs
	}
}

func label(children []child, labels map[string]string, forced bool) {
	for _, ch := range children {
		if ch.typed != nil {
			have := ch.typed.GetLabels()
			if len(labels) == 0 {
				continue
			}
			if have == nil {
				have = make(map[string]string, len(labels))
			}
			for k, v := range labels {
				if _, ok := have[k]; forced || !ok {
					have[k] = v
				}
			}
			ch.typed.SetLabels(have)
			continue
		}
		have := ensureTree(ensureTree(ch.m, "metadata"), "labels")
		for k, v := range labels {
			if _, ok := have[k]; forced || !ok {
				have[k] = v
			}
		}
	}
}

func harmonizeNaming(children []child, name string, c config) {
	for _, ch := range children {
		if ch.typed != nil {
			o := ch.typed
			if c.forced || (o.GetName() == "" && o.GetGenerateName() == "") {
				if c.strict {
					o.SetName(name)
					o.SetGenerateName("")
				} else {
					o.SetGenerateName(name + "-")
					o.SetName("")
				}
			}
			continue
		}
		md, _ := ch.m["metadata"].(map[string]any)
		_, hasName := md["name"]
		_, hasGenerateName := md["generateName"]
		if c.forced || (!hasName && !hasGenerateName) {
			md = ensureTree(ch.m, "metadata")
			if c.strict {
				md["name"] = name
				delete(md, "generateName")
			} else {
				md["generateName"] = name + "-"
				delete(md, "name")
			}
		}
	}
}

func adjustNamespace(children []child, namespace string, forced bool) {
	for _, ch := range children {
		if ch.typed != nil {
			if forced || ch.typed.GetNamespace() == "" {
				ch.typed.SetNamespace(namespace)
			}
			continue
		}
		md, _ := ch.m["metadata"].(map[string]any)
		if forced || md["namespace"] == nil {
			md = ensureTree(ch.m, "metadata")
			if namespace == "" {
				delete(md, "namespace")
			} else {
				md["namespace"] = namespace
			}
		}
	}
}

// ensureTree returns m[key] as an object, putting an empty one there if it
// is absent or null (collect has checked that it is no other value).
func ensureTree(m map[string]any, key string) map[string]any {
	if t, ok := m[key].(map[string]any); ok {
		return t
	}
	t := map[string]any{}
	m[key] = t
	return t
}

// refUID returns the uid of an untyped owner reference.
func refUID(ref any) string {
	r, _ := ref.(map[string]any)
	uid, _ := r["uid"].(string)
	return uid
}
