package reactor

import (
	"context"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	k8stesting "k8s.io/client-go/testing"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/progress"
	"github.com/kopf-go/kopf/runtime/registry"
)

// TestStackedRegistrationsShareOneProgressRecord: Kopf's decorators stacked
// on one function with one id and other options (@kopf.on.create(...,
// id='x', retries=5) over @kopf.on.update(..., id='x')) are two
// registrations of that id; the creation and then the update keep their
// progress in the one record kopf.zalando.org/x, as Kopf writes it (see
// the wire format's ProgressRecord): the purpose says which cause started
// it, and the record is purged when the cause is handled.
func TestStackedRegistrationsShareOneProgressRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // the clock starts at 2000-01-01T00:00:00Z
		var reasons []causes.Reason
		fn := func(_ context.Context, kw *kwargs.Changing) (any, error) {
			reasons = append(reasons, kw.Reason)
			if len(reasons)%2 == 1 { // the first call of each cause
				return nil, execution.NewTemporaryError("not yet", 30*time.Second)
			}
			return nil, nil
		}
		create := handler("x", fn, causes.Create)
		create.Func, create.Retries = "op.Fn", 5
		update := handler("x", fn, causes.Update)
		update.Func = "op.Fn"
		h := newHarness(t, spec(map[string]any{"field": 1.0}), func(reg *registry.Registry) {
			mustAdd(t, reg, create, update)
		})
		wantRecords := []any{
			`{"started":"2000-01-01T00:00:00.000000+00:00","delayed":"2000-01-01T00:00:30.000000+00:00","purpose":"create","retries":1,"success":false,"failure":false,"message":"not yet"}`,
			nil, // purged when the creation is handled
			`{"started":"2000-01-01T00:00:30.000000+00:00","delayed":"2000-01-01T00:01:00.000000+00:00","purpose":"update","retries":1,"success":false,"failure":false,"message":"not yet"}`,
			nil,
		}
		records := progressRecords(t, h.settle(t.Context(), 5), "x")
		h.update(func(obj map[string]any) { obj["spec"].(map[string]any)["field"] = 2.0 })
		records = append(records, progressRecords(t, h.settle(t.Context(), 5), "x")...)
		if !reflect.DeepEqual(records, wantRecords) {
			t.Errorf("the progress records written are\n%q\nwant\n%q", records, wantRecords)
		}
		if want := []causes.Reason{causes.Create, causes.Create, causes.Update, causes.Update}; !reflect.DeepEqual(reasons, want) {
			t.Errorf("the function ran for %v, want %v", reasons, want)
		}
		for line, n := range map[string]int{
			"INFO Handler 'x' succeeded.":                                             2, // once per cause
			"INFO Creation is processed: 1 succeeded; 0 failed.":                      1,
			"INFO " + causes.Update.Title() + " is processed: 1 succeeded; 0 failed.": 1,
		} {
			if got := h.countLogs(line); got != n {
				t.Errorf("%q logged %d times, want %d; logs: %q", line, got, n, h.messages())
			}
		}
	})
}

// progressRecords returns the values that patches wrote to the progress
// record of a handler id, in order (nil: purged).
func progressRecords(t *testing.T, patches []k8stesting.PatchAction, id string) []any {
	t.Helper()
	var out []any
	for _, p := range patches {
		if v, ok := resolve(patchData(t, p), "metadata", "annotations", progress.DefaultPrefix+"/"+id); ok {
			out = append(out, v)
		}
	}
	return out
}

// TestStackedRegistrationsRunOncePerCause: an object changed while the
// operator was down is both updated and resumed; of the registrations of
// one id for update and for resume, only the update's runs, once (Kopf
// calls a function once per cause and id).
func TestStackedRegistrationsRunOncePerCause(t *testing.T) {
	var c calls
	update := handler("x", c.fn("update", nil), causes.Update)
	update.Func, update.Retries = "op.Fn", 5
	resume := handler("x", c.fn("resume", nil), causes.Resume)
	resume.Func = "op.Fn"
	obj := spec(map[string]any{"field": 2.0})
	obj["metadata"] = map[string]any{"annotations": map[string]any{
		progress.DefaultPrefix + "/last-handled-configuration": `{"spec":{"field":1}}`,
	}}
	h := newHarness(t, obj, func(reg *registry.Registry) {
		mustAdd(t, reg, resume, update)
	})
	h.mem = &memory{uid: "uid-1", memo: kwargs.Memo{}, noticedByListing: true} // the first listing's object
	h.settle(t.Context(), 5)
	if want := []string{"update"}; !reflect.DeepEqual(c.ids, want) {
		t.Errorf("ran %v, want %v", c.ids, want)
	}
}
