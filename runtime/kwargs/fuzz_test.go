package kwargs

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kopf-go/kopf/runtime/body"
)

// shaped has a field of every kind that an operator's Go type may give a
// custom resource's fields, kube-builder's and apimachinery's types too.
type shaped struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Field    string               `json:"field"`
		Replicas int32                `json:"replicas"`
		Count    *int64               `json:"count,omitempty"`
		Small    int8                 `json:"small"`
		Unsigned uint16               `json:"unsigned"`
		Ratio    float64              `json:"ratio"`
		Ratio32  float32              `json:"ratio32"`
		On       *bool                `json:"on,omitempty"`
		Items    []string             `json:"items"`
		Labels   map[string]string    `json:"labels"`
		Nested   *struct{ A []int }   `json:"nested,omitempty"`
		Memory   resource.Quantity    `json:"memory"`
		Port     intstr.IntOrString   `json:"port"`
		When     metav1.Time          `json:"when"`
		Every    metav1.Duration      `json:"every"`
		Raw      runtime.RawExtension `json:"raw"`
		Bytes    []byte               `json:"bytes"`
		Free     map[string]any       `json:"free"`
	} `json:"spec"`
}

// FuzzDecode: any object the API server sends (a custom resource is
// whatever its schema lets through, and a schema may let anything through)
// decodes into the handlers' Go type or is an error, never a panic; what
// decodes, converted back to an object, decodes to the same value.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"a","labels":{"l":"v"}},"spec":{"field":"x","replicas":3,"count":5,"ratio":0.5,"on":true,"items":["a"],"labels":{"k":"v"},"memory":"1Gi","port":"http","when":"2026-01-01T00:00:00Z","every":"1m","raw":{"x":[1]},"bytes":"aGk=","free":{"n":null}}}`,
		`{"spec":{"replicas":"three"}}`,
		`{"spec":{"small":300,"unsigned":-1,"replicas":1e10,"ratio":"x"}}`,
		`{"spec":{"memory":"1e1000","port":8080,"when":"yesterday","every":"forever"}}`,
		`{"metadata":{"creationTimestamp":null,"ownerReferences":[{}]},"spec":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if utiljson.Unmarshal(data, &obj) != nil || obj == nil { // as client-go decodes an object
			return
		}
		got, err := decode[shaped](nil, 0, body.Body(obj))
		if err != nil {
			return
		}
		back, err := runtime.DefaultUnstructuredConverter.ToUnstructured(got)
		if err != nil {
			t.Fatalf("%s decodes to %+v, which does not convert back: %v", data, got, err)
		}
		again, err := decode[shaped](nil, 0, back)
		if err != nil {
			t.Fatalf("%s decodes to %+v, converted back to %v, which does not decode: %v", data, got, back, err)
		}
		if !equality.Semantic.DeepEqual(got, again) {
			t.Fatalf("%s decodes to %+v, converted back to %v, decoded again as %+v", data, got, back, again)
		}
	})
}
