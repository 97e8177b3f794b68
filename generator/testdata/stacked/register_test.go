package stacked

import (
	"reflect"
	"testing"

	"github.com/kopf-go/kopf"
)

func TestStackedRegistrations(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	res := kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	type reg struct {
		ID      string
		Func    string
		Reasons []kopf.Reason
		Retries int
	}
	createResume := reg{"x", "example.com/golden/stacked.Fn", []kopf.Reason{kopf.ReasonCreate, kopf.ReasonResume}, 3}
	update := reg{"x", "example.com/golden/stacked.Fn", []kopf.Reason{kopf.ReasonUpdate}, 0}
	for reason, want := range map[kopf.Reason]reg{
		kopf.ReasonCreate: createResume,
		kopf.ReasonResume: createResume,
		kopf.ReasonUpdate: update,
	} {
		hs := r.ChangingHandlers(res, reason)
		if len(hs) != 1 {
			t.Fatalf("%s: %d handlers, want 1", reason, len(hs))
		}
		h := hs[0]
		if got := (reg{h.ID, h.Func, h.Reasons, h.Retries}); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", reason, got, want)
		}
	}
}
