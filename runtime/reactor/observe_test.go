package reactor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// Observe is told how every attempt ended, per handler and object, with
// sub-handlers by their full id, retries counted, and only once the
// cycle's patch that stores the outcome is sent.
func TestObserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		flaky := 0
		h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
			mustAdd(t, reg,
				handler("parent", func(ctx context.Context, _ *kwargs.Changing) (any, error) {
					sub := registry.ChangingHandler{ID: "child", Fn: func(context.Context, *kwargs.Changing) (any, error) { return nil, nil }}
					return nil, registry.Subhandler(ctx, sub)
				}, causes.Create),
				handler("bad", func(context.Context, *kwargs.Changing) (any, error) {
					return nil, execution.NewPermanentError("never")
				}, causes.Create),
				handler("flaky", func(context.Context, *kwargs.Changing) (any, error) {
					if flaky++; flaky == 1 {
						return nil, execution.NewTemporaryError("later", 10*time.Second)
					}
					return "ok", nil
				}, causes.Create),
			)
		})
		var mu sync.Mutex
		var got []string
		patchesAtReport := map[string]int{}
		h.r.Observe = func(o Observation) {
			mu.Lock()
			defer mu.Unlock()
			if o.Namespace != "ns" || o.Name != "obj" || o.UID != "uid-1" || o.Resource.Plural != "kopfexamples" || o.Reason != causes.Create {
				t.Errorf("the observation names another object or cause: %+v", o)
			}
			kind := "retry " + o.Outcome.Message
			switch {
			case o.Outcome.Success:
				kind = "success"
			case o.Outcome.Failure:
				kind = "failure " + o.Outcome.Message
			}
			line := fmt.Sprintf("%s#%d: %s", o.Handler, o.Retry, kind)
			got = append(got, line)
			patchesAtReport[line] = len(h.patchesSince(0))
		}
		before := 0
		for i := 0; i < 10; i++ {
			before = len(h.patchesSince(0))
			patches, err := h.cycle(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			for line, n := range patchesAtReport {
				if n <= before {
					t.Errorf("%q is reported before its cycle's patch is sent", line)
				}
				delete(patchesAtReport, line)
			}
			mu.Unlock()
			if len(patches) == 0 {
				break
			}
		}
		byHandler := map[string][]string{}
		for _, line := range got {
			id, _, _ := strings.Cut(line, "#")
			byHandler[id] = append(byHandler[id], line)
		}
		want := map[string][]string{
			// The child runs inside its parent's attempt, before it ends.
			"parent":       {"parent#0: success"},
			"parent/child": {"parent/child#0: success"},
			"bad":          {"bad#0: failure never"},
			"flaky":        {"flaky#0: retry later", "flaky#1: success"},
		}
		for id, lines := range want {
			if strings.Join(byHandler[id], "; ") != strings.Join(lines, "; ") {
				t.Errorf("%s: observed %q, want %q", id, byHandler[id], lines)
			}
		}
		if len(byHandler) != len(want) {
			t.Errorf("observed handlers %v", got)
		}
	})
}

// An on.event handler's outcome is reported at once, with no cause.
func TestObserveEvents(t *testing.T) {
	h := newHarness(t, spec(nil), func(reg *registry.Registry) {
		for _, id := range []string{"good", "bad"} {
			err := reg.AddEvent(registry.EventHandler{ID: id, Selector: testSelector, Fn: func(context.Context, *kwargs.Event) error {
				if id == "bad" {
					return fmt.Errorf("boom")
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	var got []string
	h.r.Observe = func(o Observation) {
		got = append(got, fmt.Sprintf("%s %q %v %v %s", o.Handler, o.Reason, o.Outcome.Success, o.Outcome.Failure, o.Outcome.Message))
	}
	h.process(t.Context(), "ADDED")
	want := []string{`good "" true false `, `bad "" false true boom`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("observed %q, want %q", got, want)
	}
}
