package hierarchies

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// objectMeta is what the functions read and write of a typed child: the
// part of metav1.Object that they use, which apply configurations have
// too (applyMeta).
type objectMeta interface {
	GetName() string
	SetName(name string)
	GetGenerateName() string
	SetGenerateName(name string)
	GetNamespace() string
	SetNamespace(namespace string)
	GetLabels() map[string]string
	SetLabels(labels map[string]string)
	GetOwnerReferences() []metav1.OwnerReference
	SetOwnerReferences(refs []metav1.OwnerReference)
}

var objectMetaACType = reflect.TypeFor[*metav1ac.ObjectMetaApplyConfiguration]()

// applyConfiguration returns the metadata of an apply configuration: a
// pointer to a struct that embeds *metav1ac.ObjectMetaApplyConfiguration,
// as client-go's (appsv1ac.DeploymentApplyConfiguration) and those of
// applyconfiguration-gen (kopf-gen --clients) do.
func applyConfiguration(v reflect.Value) (*applyMeta, bool) {
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	s := v.Elem()
	t := s.Type()
	for i := range t.NumField() {
		if f := t.Field(i); f.Anonymous && f.Type == objectMetaACType {
			return &applyMeta{field: s.Field(i)}, true
		}
	}
	return nil, false
}

// applyMeta is the objectMeta of an apply configuration: field is its
// embedded *metav1ac.ObjectMetaApplyConfiguration, created on the first
// write when nil. Empty strings are absent fields (nil), never "".
type applyMeta struct {
	field reflect.Value
}

func (a *applyMeta) get() *metav1ac.ObjectMetaApplyConfiguration {
	m, _ := a.field.Interface().(*metav1ac.ObjectMetaApplyConfiguration)
	if m == nil {
		return &metav1ac.ObjectMetaApplyConfiguration{}
	}
	return m
}

func (a *applyMeta) ensure() *metav1ac.ObjectMetaApplyConfiguration {
	if m, _ := a.field.Interface().(*metav1ac.ObjectMetaApplyConfiguration); m != nil {
		return m
	}
	m := &metav1ac.ObjectMetaApplyConfiguration{}
	a.field.Set(reflect.ValueOf(m))
	return m
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (a *applyMeta) GetName() string                    { return deref(a.get().Name) }
func (a *applyMeta) SetName(name string)                { a.ensure().Name = ptr(name) }
func (a *applyMeta) GetGenerateName() string            { return deref(a.get().GenerateName) }
func (a *applyMeta) SetGenerateName(name string)        { a.ensure().GenerateName = ptr(name) }
func (a *applyMeta) GetNamespace() string               { return deref(a.get().Namespace) }
func (a *applyMeta) SetNamespace(namespace string)      { a.ensure().Namespace = ptr(namespace) }
func (a *applyMeta) GetLabels() map[string]string       { return a.get().Labels }
func (a *applyMeta) SetLabels(labels map[string]string) { a.ensure().Labels = labels }

// GetOwnerReferences returns the owner references as metav1's, absent
// fields as zero values.
func (a *applyMeta) GetOwnerReferences() []metav1.OwnerReference {
	acs := a.get().OwnerReferences
	if acs == nil {
		return nil
	}
	out := make([]metav1.OwnerReference, len(acs))
	for i, r := range acs {
		out[i] = metav1.OwnerReference{
			APIVersion: deref(r.APIVersion), Kind: deref(r.Kind), Name: deref(r.Name),
			Controller: r.Controller, BlockOwnerDeletion: r.BlockOwnerDeletion,
		}
		if r.UID != nil {
			out[i].UID = *r.UID
		}
	}
	return out
}

// SetOwnerReferences sets the owner references: those of a uid that the
// configuration has already are kept as they are (their absent fields
// stay absent), the others are added.
func (a *applyMeta) SetOwnerReferences(refs []metav1.OwnerReference) {
	m := a.ensure()
	have := map[types.UID]metav1ac.OwnerReferenceApplyConfiguration{}
	for _, r := range m.OwnerReferences {
		if r.UID != nil {
			have[*r.UID] = r
		}
	}
	out := make([]metav1ac.OwnerReferenceApplyConfiguration, 0, len(refs))
	for _, r := range refs {
		if kept, ok := have[r.UID]; ok {
			out = append(out, kept)
			continue
		}
		ref := metav1ac.OwnerReference().WithAPIVersion(r.APIVersion).WithKind(r.Kind).WithName(r.Name).WithUID(r.UID)
		ref.Controller, ref.BlockOwnerDeletion = r.Controller, r.BlockOwnerDeletion
		out = append(out, *ref)
	}
	m.OwnerReferences = out
}
