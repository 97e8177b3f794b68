package activities

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/kopf-go/kopf"
)

func TestActivities(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	type reg struct {
		ID      string
		Param   any
		Errors  kopf.ErrorsMode
		Timeout time.Duration
		Retries int
		Backoff time.Duration
	}
	for _, tt := range []struct {
		activity kopf.Activity
		want     []reg
	}{
		{kopf.ActivityStartup, []reg{
			{ID: "startup_fn"},
			{ID: "retried", Param: "p", Errors: kopf.ErrorsPermanent, Timeout: time.Minute, Retries: 3, Backoff: 1500 * time.Millisecond},
			{ID: "hook"},
		}},
		{kopf.ActivityCleanup, []reg{{ID: "hook"}}},
		{kopf.ActivityAuthentication, []reg{{ID: "login_fn", Errors: kopf.ErrorsPermanent}}},
		{kopf.ActivityProbe, []reg{{ID: "count"}, {ID: "pods"}}},
	} {
		var got []reg
		for _, h := range r.ActivityHandlers(tt.activity) {
			got = append(got, reg{h.ID, h.Param, h.Errors, h.Timeout, h.Retries, h.Backoff})
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s handlers:\n got %+v\nwant %+v", tt.activity, got, tt.want)
		}
	}
}

// TestTypedResult: a probe returning an int (kopf.AnyResult) gives it as
// its result.
func TestTypedResult(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	for _, h := range r.ActivityHandlers(kopf.ActivityProbe) {
		if h.ID != "pods" {
			continue
		}
		if got, err := h.Fn(context.Background(), &kopf.ActivityKwargs{}); got != 3 || err != nil {
			t.Errorf("Fn() = %#v, %v; want 3", got, err)
		}
		return
	}
	t.Fatal("no probe pods")
}
