package v1_test

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	ac "example.com/golden/clients/generated/applyconfiguration/kopf/v1"
	"example.com/golden/clients/generated/clientset/versioned/fake"
	"example.com/golden/clients/generated/clientset/versioned/scheme"
	v1 "example.com/golden/clients/kopf/v1"
)

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for obj, kind := range map[runtime.Object]string{&v1.KopfExample{}: "KopfExample", &v1.KopfExampleList{}: "KopfExampleList", &v1.Cluster{}: "Cluster"} {
		gvks, _, err := s.ObjectKinds(obj)
		if want := (schema.GroupVersionKind{Group: "kopf.dev", Version: "v1", Kind: kind}); err != nil || len(gvks) != 1 || gvks[0] != want {
			t.Errorf("%T: %v, %v; want %v", obj, gvks, err, want)
		}
	}
	// The clientset's scheme has them too.
	if !scheme.Scheme.Recognizes(v1.SchemeGroupVersion.WithKind("KopfExample")) {
		t.Error("the clientset's scheme does not know KopfExample")
	}
}

func TestApplyConfiguration(t *testing.T) {
	cfg := ac.KopfExample("kex", "default").WithSpec(ac.KopfExampleSpec().WithField("value"))
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"KopfExample","apiVersion":"kopf.dev/v1","metadata":{"name":"kex","namespace":"default"},"spec":{"field":"value"}}`
	if string(b) != want {
		t.Errorf("apply configuration:\n%s\nwant\n%s", b, want)
	}
}

// TestFakeClientset: the generated fake clientset serves the typed client
// from its tracker, and records the actions.
func TestFakeClientset(t *testing.T) {
	cs := fake.NewClientset(&v1.KopfExample{ObjectMeta: metav1.ObjectMeta{Name: "kex", Namespace: "default"}})
	got, err := cs.KopfV1().KopfExamples("default").Get(t.Context(), "kex", metav1.GetOptions{})
	if err != nil || got.Name != "kex" {
		t.Fatalf("get: %v, %v", got, err)
	}
	applied, err := cs.KopfV1().KopfExamples("default").Apply(t.Context(), ac.KopfExample("kex", "default").WithSpec(ac.KopfExampleSpec().WithField("value")), metav1.ApplyOptions{FieldManager: "test"})
	if err != nil || applied.Spec.Field != "value" {
		t.Fatalf("apply: %+v, %v", applied, err)
	}
	if _, err := cs.KopfV1().Clusters().Create(t.Context(), &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a cluster-scoped object: %v", err)
	}
	var verbs []string
	for _, a := range cs.Actions() {
		verbs = append(verbs, a.GetVerb())
	}
	if want := "get patch create"; strings.Join(verbs, " ") != want {
		t.Errorf("actions %v, want %s", verbs, want)
	}
}
