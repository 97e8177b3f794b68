package kopf

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-go/kopf/runtime/hierarchies"
)

// Hierarchies: Kopf's kopf.adopt(), kopf.label(), kopf.append_owner_reference(),
// kopf.remove_owner_reference(), kopf.harmonize_naming() and
// kopf.adjust_namespace(), which prepare children objects before the
// operator creates them. Children are typed objects (*corev1.Pod, any
// metav1.Object), untyped ones (*unstructured.Unstructured,
// map[string]any, Body), apply configurations
// (*appsv1ac.DeploymentApplyConfiguration, those of kopf-gen --clients),
// or slices, lists and iterators of them; see
// package runtime/hierarchies and docs/hierarchies.md.
//
//	pod := &corev1.Pod{...}
//	if err := kopf.Adopt(pod, kopf.OwnerOfBody(kw.Body)); err != nil { ... }

// The owner and the options of the hierarchies' functions.
type (
	// Owner is what children are adopted by: its apiVersion, kind, name,
	// uid, namespace and labels.
	Owner = hierarchies.Owner
	// Forced overwrites what the children already have (forced=True).
	Forced = hierarchies.Forced
	// Strict names the children exactly after the owner, not with a
	// generated suffix (strict=True).
	Strict = hierarchies.Strict
	// Nested lists paths of objects in the children to label too, such as
	// "spec.template" (nested=).
	Nested = hierarchies.Nested
	// Controller is an owner reference's controller field (true by default).
	Controller = hierarchies.Controller
	// BlockOwnerDeletion is an owner reference's blockOwnerDeletion field
	// (true by default).
	BlockOwnerDeletion = hierarchies.BlockOwnerDeletion

	// OwnerError is the error of an owner without one of the fields that
	// an owner reference needs (apiVersion, kind, name, uid).
	OwnerError = hierarchies.OwnerError

	// AdoptOption is an option of Adopt: Forced, Strict, Nested.
	AdoptOption = hierarchies.AdoptOption
	// LabelOption is an option of Label: Forced, Nested.
	LabelOption = hierarchies.LabelOption
	// NamingOption is an option of HarmonizeNaming: Forced, Strict.
	NamingOption = hierarchies.NamingOption
	// NamespaceOption is an option of AdjustNamespace: Forced.
	NamespaceOption = hierarchies.NamespaceOption
	// OwnerReferenceOption is an option of AppendOwnerReference:
	// Controller, BlockOwnerDeletion.
	OwnerReferenceOption = hierarchies.OwnerReferenceOption
)

// ErrUnsupported is wrapped by the hierarchies' errors about children that
// are not objects (Kopf's "K8s object class is not supported").
var ErrUnsupported = hierarchies.ErrUnsupported

// OwnerOfBody returns the owner of an object as handlers get it (kw.Body).
func OwnerOfBody(b Body) Owner { return hierarchies.OwnerOfBody(b) }

// OwnerOf returns the owner of a typed or unstructured object whose
// apiVersion and kind are set in it (a typed handler's kw.Object); use
// OwnerOfKind for objects without them (as client-go's typed clients
// return them).
func OwnerOf(obj metav1.Object) Owner { return hierarchies.OwnerOf(obj) }

// OwnerOfKind returns the owner of a typed object of the given kind, such
// as v1.SchemeGroupVersion.WithKind("KopfExample").
func OwnerOfKind(obj metav1.Object, gvk schema.GroupVersionKind) Owner {
	return hierarchies.OwnerOfKind(obj, gvk)
}

// Adopt makes the children the owner's (kopf.adopt): an owner reference to
// it, a name after its name, its namespace and its labels, as the four
// functions below do; Forced, Strict and Nested are passed to those that
// have them. On an error, no child is changed.
func Adopt(objs any, owner Owner, opts ...AdoptOption) error {
	return hierarchies.Adopt(objs, owner, opts...)
}

// AppendOwnerReference adds a controller owner reference to the owner that
// blocks its deletion, unless the children have one with its uid
// (kopf.append_owner_reference).
func AppendOwnerReference(objs any, owner Owner, opts ...OwnerReferenceOption) error {
	return hierarchies.AppendOwnerReference(objs, owner, opts...)
}

// RemoveOwnerReference removes the owner references with the owner's uid
// (kopf.remove_owner_reference).
func RemoveOwnerReference(objs any, owner Owner) error {
	return hierarchies.RemoveOwnerReference(objs, owner)
}

// Label adds the labels the children do not have yet, or all with Forced,
// also to their Nested objects (kopf.label).
func Label(objs any, labels map[string]string, opts ...LabelOption) error {
	return hierarchies.Label(objs, labels, opts...)
}

// HarmonizeNaming names the children without a name after name: a name
// generated from the prefix name+"-", or exactly name with Strict; every
// child with Forced (kopf.harmonize_naming).
func HarmonizeNaming(objs any, name string, opts ...NamingOption) error {
	return hierarchies.HarmonizeNaming(objs, name, opts...)
}

// AdjustNamespace puts the children without a namespace into namespace;
// every child with Forced (kopf.adjust_namespace).
func AdjustNamespace(objs any, namespace string, opts ...NamespaceOption) error {
	return hierarchies.AdjustNamespace(objs, namespace, opts...)
}
