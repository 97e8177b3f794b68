package registry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

func activityFn(context.Context, *kwargs.Activity) (any, error) { return nil, nil }

func TestAddActivityValidates(t *testing.T) {
	ok := ActivityHandler{ID: "a", Activity: causes.ActivityStartup, Fn: activityFn}
	tests := []struct {
		name    string
		mutate  func(h *ActivityHandler)
		wantErr string // "": accepted
	}{
		{"valid", func(*ActivityHandler) {}, ""},
		{"every activity", func(h *ActivityHandler) { h.Activity = causes.ActivityProbe }, ""},
		{"every errors mode", func(h *ActivityHandler) { h.Errors = ErrorsIgnored }, ""},
		{"no id", func(h *ActivityHandler) { h.ID = "" }, "has no id"},
		{"no function", func(h *ActivityHandler) { h.Fn = nil }, `"a" has no function`},
		{"an unknown activity", func(h *ActivityHandler) { h.Activity = "shutdown" }, `unknown activity "shutdown"`},
		{"an unknown errors mode", func(h *ActivityHandler) { h.Errors = "sometimes" }, `errors="sometimes"`},
		{"a negative timeout", func(h *ActivityHandler) { h.Timeout = -time.Second }, "must not be negative"},
		{"negative retries", func(h *ActivityHandler) { h.Retries = -1 }, "must not be negative"},
		{"a negative backoff", func(h *ActivityHandler) { h.Backoff = -time.Second }, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := ok
			tt.mutate(&h)
			err := New().AddActivity(h)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("AddActivity: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("AddActivity = %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

// An id is unique per activity; ActivityHandlers gives one activity's
// handlers in registration order.
func TestActivityHandlers(t *testing.T) {
	r := New()
	for _, h := range []ActivityHandler{
		{ID: "b", Activity: causes.ActivityStartup, Fn: activityFn},
		{ID: "a", Activity: causes.ActivityCleanup, Fn: activityFn},
		{ID: "a", Activity: causes.ActivityStartup, Fn: activityFn}, // the same id, another activity
		{ID: "c", Activity: causes.ActivityStartup, Fn: activityFn},
	} {
		if err := r.AddActivity(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.AddActivity(ActivityHandler{ID: "b", Activity: causes.ActivityStartup, Fn: activityFn}); err == nil || !strings.Contains(err.Error(), "registered twice for the startup activity") {
		t.Errorf("a duplicate: %v", err)
	}
	for _, tt := range []struct {
		activity causes.Activity
		want     string
	}{
		{causes.ActivityStartup, "b a c"},
		{causes.ActivityCleanup, "a"},
		{causes.ActivityProbe, ""},
	} {
		var ids []string
		for _, h := range r.ActivityHandlers(tt.activity) {
			ids = append(ids, h.ID)
		}
		if got := strings.Join(ids, " "); got != tt.want {
			t.Errorf("ActivityHandlers(%s) = %q, want %q", tt.activity, got, tt.want)
		}
	}
}

func TestActivityAdapters(t *testing.T) {
	info := &ConnectionInfo{Config: &rest.Config{Host: "https://example"}, Priority: 5}
	failed := errors.New("failed")
	tests := []struct {
		name    string
		info    *ConnectionInfo
		err     error
		wantNil bool // the result is an untyped nil (no credentials)
	}{
		{"credentials", info, nil, false},
		{"none from this handler", nil, nil, true},
		{"an error", nil, failed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen kwargs.Activity
			fn := LoginFunc(func(_ context.Context, kw kwargs.Activity) (*ConnectionInfo, error) {
				seen = kw
				return tt.info, tt.err
			})
			got, err := fn(context.Background(), &kwargs.Activity{Activity: causes.ActivityAuthentication, Retry: 1})
			if err != tt.err {
				t.Errorf("error = %v, want %v", err, tt.err)
			}
			if tt.wantNil && got != nil {
				t.Errorf("result = %#v, want an untyped nil", got)
			}
			if !tt.wantNil && got != tt.info {
				t.Errorf("result = %v, want %v", got, tt.info)
			}
			if seen.Activity != causes.ActivityAuthentication || seen.Retry != 1 {
				t.Errorf("the handler got %+v", seen)
			}
		})
	}
	a := ActivityFunc(func(_ context.Context, kw kwargs.Activity) (any, error) { return kw.Param, failed })
	if got, err := a(context.Background(), &kwargs.Activity{Param: "p"}); got != "p" || err != failed {
		t.Errorf("ActivityFunc = %v, %v", got, err)
	}
}
