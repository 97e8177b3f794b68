package hierarchies_test

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	h "github.com/kopf-go/kopf/runtime/hierarchies"
)

// TestAdoptApplyConfiguration adopts apply configurations as server-side
// apply sends them: the metadata is created when absent, empty fields stay
// absent (never ""), the pod template is labelled when present and never
// created when absent, and an owner reference already there is kept as
// written.
func TestAdoptApplyConfiguration(t *testing.T) {
	owner := h.OwnerOfBody(ownerBody())
	render := func(t *testing.T, v any) string {
		t.Helper()
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	const refJSON = `"ownerReferences":[{"apiVersion":"owner-api-version","kind":"OwnerKind","name":"owner-name","uid":"owner-uid","controller":true,"blockOwnerDeletion":true}]`
	const labelsJSON = `"labels":{"label-1":"value-1","label-2":"value-2"}`
	tests := []struct {
		name string
		obj  any
		opts []h.AdoptOption
		want string
	}{
		{"no metadata", &appsv1ac.DeploymentApplyConfiguration{}, nil,
			`{"metadata":{"generateName":"owner-name-","namespace":"owner-namespace",` + labelsJSON + `,` + refJSON + `}}`},
		{"named, strict, with a template", appsv1ac.Deployment("web", "").WithSpec(appsv1ac.DeploymentSpec().
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "web"}))),
			[]h.AdoptOption{h.Strict(true), h.Nested{"spec.template"}},
			`{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","namespace":"owner-namespace",` + labelsJSON + `,` + refJSON + `},` +
				`"spec":{"template":{"metadata":{"labels":{"app":"web","label-1":"value-1","label-2":"value-2"}}}}}`},
		{"forced name, no template", appsv1ac.Deployment("web", "ns"), []h.AdoptOption{h.Forced(true), h.Strict(true), h.Nested{"spec.template"}},
			`{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"owner-name","namespace":"owner-namespace",` + labelsJSON + `,` + refJSON + `}}`},
		{"existing reference", appsv1ac.Deployment("web", "ns").WithOwnerReferences(metav1ac.OwnerReference().WithUID(types.UID(ownerUID))), nil,
			`{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","namespace":"ns",` + labelsJSON + `,"ownerReferences":[{"uid":"owner-uid"}]}}`},
		{"several", []*appsv1ac.DeploymentApplyConfiguration{appsv1ac.Deployment("a", "ns"), nil}, nil,
			`[{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"a","namespace":"ns",` + labelsJSON + `,` + refJSON + `}},null]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := h.Adopt(tt.obj, owner, tt.opts...); err != nil {
				t.Fatal(err)
			}
			if got := render(t, tt.obj); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestRemoveOwnerReferenceApplyConfiguration removes the owner's
// reference from an apply configuration, keeping the others as written.
func TestRemoveOwnerReferenceApplyConfiguration(t *testing.T) {
	d := appsv1ac.Deployment("web", "ns").WithOwnerReferences(
		metav1ac.OwnerReference().WithUID(types.UID(ownerUID)).WithName("x"),
		metav1ac.OwnerReference().WithUID("other"),
	)
	if err := h.RemoveOwnerReference(d, h.OwnerOfBody(ownerBody())); err != nil {
		t.Fatal(err)
	}
	if len(d.OwnerReferences) != 1 || *d.OwnerReferences[0].UID != "other" || d.OwnerReferences[0].Name != nil {
		t.Errorf("owner references = %+v, want only the other one, as written", d.OwnerReferences)
	}
}
