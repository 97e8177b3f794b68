package registry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

func daemonFn(context.Context, *kwargs.Daemon) (any, error) { return nil, nil }
func timerFn(context.Context, *kwargs.Timer) (any, error)   { return nil, nil }

func TestAddDaemonValidates(t *testing.T) {
	for _, tt := range []struct {
		name    string
		h       DaemonHandler
		wantErr string
	}{
		{"valid", DaemonHandler{ID: "d", Selector: examples, Fn: daemonFn, CancellationBackoff: time.Second, CancellationTimeout: -1}, ""},
		{"no id", DaemonHandler{Selector: examples, Fn: daemonFn}, "daemon has no id"},
		{"no function", DaemonHandler{ID: "d"}, `daemon "d" has no function`},
		{"bad errors", DaemonHandler{ID: "d", Fn: daemonFn, Errors: "loud"}, `daemon "d": errors="loud" is none of temporary, permanent, ignored`},
		{"negative retries", DaemonHandler{ID: "d", Fn: daemonFn, Retries: -1}, `daemon "d": timeout, retries and backoff must not be negative`},
		{"negative delay", DaemonHandler{ID: "d", Fn: daemonFn, InitialDelay: -time.Second}, `daemon "d": initial_delay, cancellation_backoff and cancellation_polling must not be negative`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := New().AddDaemon(tt.h)
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Errorf("AddDaemon() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestAddTimerValidates(t *testing.T) {
	for _, tt := range []struct {
		name    string
		h       TimerHandler
		wantErr string
	}{
		{"interval", TimerHandler{ID: "t", Selector: examples, Fn: timerFn, Interval: time.Second, Sharp: true}, ""},
		{"idle", TimerHandler{ID: "t", Selector: examples, Fn: timerFn, Idle: time.Second}, ""},
		{"no id", TimerHandler{Fn: timerFn, Interval: time.Second}, "timer has no id"},
		{"no function", TimerHandler{ID: "t", Interval: time.Second}, `timer "t" has no function`},
		{"one-shot: neither interval nor idle, as Kopf allows", TimerHandler{ID: "t", Fn: timerFn}, ""},
		{"sharp without interval", TimerHandler{ID: "t", Fn: timerFn, Idle: time.Second, Sharp: true}, `timer "t" is sharp without an interval`},
		{"negative interval", TimerHandler{ID: "t", Fn: timerFn, Interval: -time.Second}, `timer "t": interval, idle and initial_delay must not be negative`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := New().AddTimer(tt.h)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.HasPrefix(err.Error(), tt.wantErr)) {
				t.Errorf("AddTimer() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestSpawningIDsUniquePerResource(t *testing.T) {
	r := New()
	if err := r.AddDaemon(DaemonHandler{ID: "x", Selector: examples, Fn: daemonFn}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddTimer(TimerHandler{ID: "x", Selector: examples, Fn: timerFn, Interval: time.Second}); err == nil || !strings.Contains(err.Error(), "taken") {
		t.Errorf("a timer with a daemon's id = %v, want an error", err)
	}
	if err := r.AddDaemon(DaemonHandler{ID: "x", Selector: examples, Fn: daemonFn}); err == nil {
		t.Error("a duplicate daemon is no error")
	}
	if err := r.AddTimer(TimerHandler{ID: "x", Selector: pods, Fn: timerFn, Interval: time.Second}); err != nil {
		t.Errorf("the same id for another resource = %v", err)
	}
	if got := r.DaemonHandlers(exRes); len(got) != 1 || got[0].ID != "x" {
		t.Errorf("DaemonHandlers(examples) = %v", got)
	}
	if got := r.TimerHandlers(exRes); len(got) != 0 {
		t.Errorf("TimerHandlers(examples) = %v", got)
	}
	if !r.HasSpawning(podRes) || !r.HasSpawning(exRes) {
		t.Error("HasSpawning is false for a resource with a daemon or timer")
	}
	if sels := r.Selectors(); len(sels) != 2 {
		t.Errorf("Selectors() = %v, want both resources", sels)
	}
}

type widget struct {
	Spec struct {
		Size int `json:"size"`
	} `json:"spec"`
}

func TestSpawningAdapters(t *testing.T) {
	good := body.Body{"spec": map[string]any{"size": int64(3)}}
	bad := body.Body{"spec": map[string]any{"size": "three"}}
	daemon := TypedDaemonFunc(func(_ context.Context, kw kwargs.TypedDaemon[widget]) (any, error) {
		return kw.Object.Spec.Size, nil
	})
	timer := TypedTimerFunc(func(_ context.Context, kw kwargs.TypedTimer[widget]) (any, error) {
		return kw.Object.Spec.Size, nil
	})
	dwhen := TypedDaemonWhen(func(kw kwargs.TypedDaemon[widget]) bool { return kw.Object.Spec.Size > 5 })
	twhen := TypedTimerWhen(func(kw kwargs.TypedTimer[widget]) bool { return kw.Object.Spec.Size > 5 })
	for _, tt := range []struct {
		name     string
		b        body.Body
		wantErr  bool
		wantWhen bool
	}{
		{"decodes", good, false, false},
		{"does not decode", bad, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dkw := &kwargs.Daemon{Base: kwargs.Base{Body: tt.b}}
			tkw := &kwargs.Timer{Base: kwargs.Base{Body: tt.b}}
			for what, call := range map[string]func() (any, error){
				"daemon": func() (any, error) { return daemon(context.Background(), dkw) },
				"timer":  func() (any, error) { return timer(context.Background(), tkw) },
			} {
				got, err := call()
				if (err != nil) != tt.wantErr || (!tt.wantErr && got != 3) {
					t.Errorf("%s = %v, %v", what, got, err)
				}
			}
			if dwhen(dkw) != tt.wantWhen || twhen(tkw) != tt.wantWhen {
				t.Errorf("when = %v, %v, want %v", dwhen(dkw), twhen(tkw), tt.wantWhen)
			}
		})
	}
	plainErr := errors.New("plain")
	d := DaemonFunc(func(_ context.Context, kw kwargs.Daemon) (any, error) { return kw.Name, plainErr })
	if got, err := d(context.Background(), &kwargs.Daemon{Base: kwargs.Base{Name: "n"}}); got != "n" || err != plainErr {
		t.Errorf("DaemonFunc = %v, %v", got, err)
	}
	tm := TimerFunc(func(_ context.Context, kw kwargs.Timer) (any, error) { return kw.Retry, nil })
	if got, _ := tm(context.Background(), &kwargs.Timer{Retry: 2}); got != 2 {
		t.Errorf("TimerFunc = %v", got)
	}
	if !DaemonWhen(func(kw kwargs.Daemon) bool { return kw.Name == "n" })(&kwargs.Daemon{Base: kwargs.Base{Name: "n"}}) {
		t.Error("DaemonWhen does not pass the kwargs")
	}
	if TimerWhen(func(kw kwargs.Timer) bool { return kw.Name == "n" })(&kwargs.Timer{}) {
		t.Error("TimerWhen does not pass the kwargs")
	}
}
