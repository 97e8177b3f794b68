package conversions

import (
	"reflect"
	"testing"

	"github.com/kopf-go/kopf"
)

// The generated registration adds one conversion per spoke, whose
// functions are the marked ones.
func TestRegister(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	convs := r.Conversions()
	if len(convs) != 1 {
		t.Fatalf("%d conversions, want 1", len(convs))
	}
	c := convs[0]
	if c.Group != "example.com" || c.Kind != "Gadget" || c.Hub != "v1" || c.Spoke != "v1alpha1" {
		t.Errorf("conversion %+v", c)
	}
	old := map[string]any{"apiVersion": "example.com/v1alpha1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g"}, "spec": map[string]any{"colour": "red"}}
	hub, err := c.ToHub(t.Context(), old)
	if err != nil {
		t.Fatal(err)
	}
	if spec := hub["spec"]; !reflect.DeepEqual(spec, map[string]any{"color": "red"}) {
		t.Errorf("to the hub: spec %v", spec)
	}
	back, err := c.FromHub(t.Context(), hub)
	if err != nil {
		t.Fatal(err)
	}
	if spec := back["spec"]; !reflect.DeepEqual(spec, map[string]any{"colour": "red"}) {
		t.Errorf("from the hub: spec %v", spec)
	}
}
