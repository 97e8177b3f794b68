package registry

import (
	"slices"
	"testing"

	"github.com/kopf-go/kopf/runtime/resources"
)

// Selectable fields are the declared ones of the resource's version,
// jsonPaths without their dot, each once; malformed paths are refused.
func TestSelectableFields(t *testing.T) {
	r := New()
	v1 := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	for _, s := range []SelectableFields{
		{Selector: v1, Fields: []string{".spec.phase", "spec.size"}},
		{Selector: resources.Selector{Name: "kopfexamples"}, Fields: []string{"spec.phase", "spec.ready"}},
		{Selector: resources.Selector{Group: "kopf.dev", Version: "v2", Name: "kopfexamples"}, Fields: []string{"spec.v2"}},
	} {
		if err := r.AddSelectableFields(s); err != nil {
			t.Fatal(err)
		}
	}
	res := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample"}
	if got, want := r.SelectableFields(res), []string{"spec.phase", "spec.size", "spec.ready"}; !slices.Equal(got, want) {
		t.Errorf("SelectableFields = %v, want %v", got, want)
	}
	if got := r.SelectableFields(resources.Resource{Version: "v1", Plural: "pods"}); got != nil {
		t.Errorf("another resource's: %v", got)
	}
	for _, bad := range []SelectableFields{
		{Fields: []string{"spec.phase"}},
		{Selector: v1, Fields: []string{""}},
		{Selector: v1, Fields: []string{"spec..phase"}},
		{Selector: v1, Fields: []string{"spec.items[0]"}},
		{Selector: v1, Fields: []string{"spec.phase="}},
	} {
		if err := r.AddSelectableFields(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
