package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
)

// kopfTime formats a time as Kopf ≥ 1.40 writes it (tz-aware UTC).
func kopfTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"
}

// naiveTime formats a time as Kopf < 1.40 wrote it (naive UTC).
func naiveTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000")
}

// Python Kopf stopped in the middle of an object's creation: two handlers
// succeeded, two were to be retried (delayed until a moment now past), and
// the diff-base is not written yet. Half of the records carry the naive
// timestamps of Kopf before 1.40. kopf-go takes over: the finished
// handlers do not run again, the unfinished ones continue with their retry
// counts and start times, and at the end the records are purged and the
// diff-base stored.
//
// Likewise for another object, stopped in the middle of an update (the
// diff-base is Kopf's, of the old spec), whose unfinished handler has an id
// long enough for Kopf to write its record under two keys (V2 and V1).
func TestTakeoverFromKopf(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "takeover")
	ri := objects(shared.Config, ns)
	ctx := context.Background()

	now := time.Now().UTC().Truncate(time.Microsecond)
	started := now.Add(-90 * time.Second)
	naiveStarted := now.Add(-45 * time.Second)
	delayed := now.Add(-5 * time.Second)
	annotations := map[string]string{
		"someannotation": "somevalue",
		// Literal records as Kopf 1.44 writes them (kopf-wire-format.md).
		prefix + "done_fn": fmt.Sprintf(`{"started":"%s","stopped":"%s","purpose":"create","retries":1,"success":true,"failure":false}`,
			kopfTime(started), kopfTime(started.Add(100*time.Millisecond))),
		prefix + "half_fn": fmt.Sprintf(`{"started":"%s","delayed":"%s","purpose":"create","retries":1,"success":false,"failure":false,"message":"Expected recoverable error."}`,
			kopfTime(started), kopfTime(delayed)),
		// As Kopf before 1.40 wrote them: naive UTC timestamps.
		prefix + "done_naive_fn": `{"started":"2020-02-14T16:58:25.396364","stopped":"2020-02-14T16:58:26.396364","purpose":"create","retries":1,"success":true,"failure":false}`,
		prefix + "half_naive_fn": fmt.Sprintf(`{"started":"%s","delayed":"%s","purpose":"create","retries":2,"success":false,"failure":false,"message":"Expected recoverable error."}`,
			naiveTime(naiveStarted), naiveTime(delayed)),
	}
	// Created before the operator starts: Kopf is gone, kopf-go comes.
	create(t, ri, example("half-done", nil, map[string]string{"somelabel": "somevalue"}, annotations))
	// The finished handlers' results, as Kopf wrote them with their records.
	status, _ := json.Marshal(map[string]any{"status": map[string]any{
		"done_fn": map[string]any{"message": "by kopf"}, "done_naive_fn": map[string]any{"message": "by kopf"},
	}})
	if _, err := ri.Patch(ctx, "half-done", types.MergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}

	// Mid-update: the diff-base has the old spec.field, the object the new.
	longID := strings.Repeat("a", 50)
	halfUpdate := fmt.Sprintf(`{"started":"%s","delayed":"%s","purpose":"update","retries":1,"success":false,"failure":false,"message":"Expected recoverable error."}`,
		kopfTime(started), kopfTime(delayed))
	create(t, ri, example("half-updated", map[string]any{"duration": "1m", "field": "new", "items": []any{"item1", "item2"}},
		map[string]string{"somelabel": "somevalue"}, map[string]string{
			"someannotation": "somevalue",
			diffBaseKey:      `{"spec":{"duration":"1m","field":"old","items":["item1","item2"]},"metadata":{"labels":{"somelabel":"somevalue"},"annotations":{"someannotation":"somevalue"}}}` + "\n",
			prefix + "upd_done_fn": fmt.Sprintf(`{"started":"%s","stopped":"%s","purpose":"update","retries":1,"success":true,"failure":false}`,
				kopfTime(started), kopfTime(started.Add(time.Second))),
			// kopf-wire-format.md: 'a'*50 -> both of these keys.
			prefix + longID: halfUpdate,
			prefix + strings.Repeat("a", 39) + "-koaVtw": halfUpdate,
		}))

	var rec calls
	op := kopftest.Start(t, shared.Config, register(
		handler("done_fn", rec.recording("done_fn", message("by kopf-go")), causes.Create),
		handler("half_fn", rec.recording("half_fn", message("by kopf-go")), causes.Create),
		handler("done_naive_fn", rec.recording("done_naive_fn", message("by kopf-go")), causes.Create),
		handler("half_naive_fn", rec.recording("half_naive_fn", message("by kopf-go")), causes.Create),
		handler("upd_done_fn", rec.recording("upd_done_fn", message("by kopf-go")), causes.Update),
		handler(longID, rec.recording(longID, message("by kopf-go")), causes.Update),
	), kopf.WithNamespaces(ns))

	obj := waitHandled(t, ri, "half-done", 30*time.Second, "done_fn", "half_fn", "done_naive_fn", "half_naive_fn")
	op.WaitLog(fmt.Sprintf("[%s/half-done] Creation is processed: 4 succeeded; 0 failed.", ns), 5*time.Second)

	for _, id := range []string{"done_fn", "done_naive_fn"} {
		if n := len(rec.of(id, "half-done")); n != 0 {
			t.Errorf("%s, finished by Kopf, ran %d times", id, n)
		}
		if msg, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", id, "message"); msg != "by kopf" {
			t.Errorf("status.%s.message is %v, want Kopf's result kept", id, msg)
		}
	}
	for _, want := range []struct {
		id      string
		retry   int
		started time.Time
	}{{"half_fn", 1, started}, {"half_naive_fn", 2, naiveStarted}} {
		got := rec.of(want.id, "half-done")
		if len(got) != 1 {
			t.Errorf("%s ran %d times, want once", want.id, len(got))
			continue
		}
		if got[0].Retry != want.retry {
			t.Errorf("%s ran with retry %d, want %d (Kopf's count continued)", want.id, got[0].Retry, want.retry)
		}
		if !got[0].Started.Equal(want.started) {
			t.Errorf("%s ran with started %s, want %s (Kopf's first attempt)", want.id, got[0].Started, want.started)
		}
		if got[0].Reason != causes.Create {
			t.Errorf("%s ran for %s, want create", want.id, got[0].Reason)
		}
	}

	// The diff-base is stored, as Kopf would store it; the records are gone.
	base := diffBase(t, obj)
	want := map[string]any{
		"spec":     map[string]any{"duration": "1m", "field": "value", "items": []any{"item1", "item2"}},
		"metadata": map[string]any{"labels": map[string]any{"somelabel": "somevalue"}, "annotations": map[string]any{"someannotation": "somevalue"}},
	}
	if got, exp := mustJSON(base), mustJSON(want); got != exp {
		t.Errorf("the diff-base is\n%s\nwant\n%s", got, exp)
	}
	if got := leftovers(obj); len(got) != 0 {
		t.Errorf("Kopf's progress records are left behind: %v", got)
	}

	// Mid-update.
	obj = waitHandled(t, ri, "half-updated", 30*time.Second, longID)
	op.WaitLog(fmt.Sprintf("[%s/half-updated] Updating is processed: 2 succeeded; 0 failed.", ns), 5*time.Second)
	if n := len(rec.of("upd_done_fn", "half-updated")); n != 0 {
		t.Errorf("upd_done_fn, finished by Kopf, ran %d times", n)
	}
	if got := rec.of(longID, "half-updated"); len(got) != 1 {
		t.Errorf("the long-named handler ran %d times, want once", len(got))
	} else {
		if got[0].Retry != 1 || got[0].Reason != causes.Update || !got[0].Started.Equal(started) {
			t.Errorf("the long-named handler ran with retry %d, reason %s, started %s; want 1, update, %s", got[0].Retry, got[0].Reason, got[0].Started, started)
		}
		if !strings.Contains(got[0].Diff, "old") || !strings.Contains(got[0].Diff, "new") {
			t.Errorf("the long-named handler got the diff %s, want spec.field old -> new", got[0].Diff)
		}
	}
	if field, _, _ := unstructured.NestedString(diffBase(t, obj), "spec", "field"); field != "new" {
		t.Errorf("the diff-base has spec.field %q, want the new value", field)
	}
	if got := leftovers(obj); len(got) != 0 {
		t.Errorf("Kopf's progress records are left behind: %v", got)
	}
}

func mustJSON(v any) string {
	data, _ := json.Marshal(v) // sorted keys: comparable
	return string(data)
}
