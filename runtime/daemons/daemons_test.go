package daemons

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

// harness is one engine with one object, its log, the patches applied and
// the wakes, all inside a synctest bubble (fake time).
type harness struct {
	t      *testing.T
	e      *Engine
	o      *Object
	log    *testutil.Buffer
	mu     sync.Mutex
	starts []time.Duration // when attempts started, since the bubble's start
	patch  []patches.Patch
	wakes  int
	stops  []Stopped
	ticks  []Tick
	t0     time.Time
}

func newHarness(t *testing.T, tweak func(*settings.Settings)) *harness {
	t.Helper()
	s := settings.Default()
	s.Execution.DefaultBackoff = time.Second
	if tweak != nil {
		tweak(s)
	}
	h := &harness{t: t, log: &testutil.Buffer{}, t0: time.Now()}
	logger := slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.e = NewEngine(context.Background(), s, logger)
	h.e.OnStopped = func(s Stopped) { h.mu.Lock(); h.stops = append(h.stops, s); h.mu.Unlock() }
	h.e.OnTick = func(tk Tick) { h.mu.Lock(); h.ticks = append(h.ticks, tk); h.mu.Unlock() }
	b := body.Body{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": map[string]any{"name": "obj", "namespace": "ns", "uid": "u1", "labels": map[string]any{"on": "yes"}}}
	h.o = h.e.NewObject(&Host{
		Resource: resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true},
		Logger:   func(body.Body) *slog.Logger { return logger },
		Apply: func(_ context.Context, _ body.Body, p patches.Patch) error {
			h.mu.Lock()
			h.patch = append(h.patch, p)
			h.mu.Unlock()
			return nil
		},
	}, b, kwargs.Memo{}, func() { h.mu.Lock(); h.wakes++; h.mu.Unlock() })
	return h
}

// mark records an attempt's start.
func (h *harness) mark() {
	h.mu.Lock()
	h.starts = append(h.starts, time.Since(h.t0))
	h.mu.Unlock()
}

func (h *harness) startTimes() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.starts...)
}

func (h *harness) wakeCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.wakes
}

func (h *harness) wantLog(line string) {
	h.t.Helper()
	if !strings.Contains(h.log.String(), line) {
		h.t.Errorf("the log lacks %q:\n%s", line, h.log.String())
	}
}

func secs(fs ...float64) []time.Duration {
	out := make([]time.Duration, len(fs))
	for i, f := range fs {
		out[i] = time.Duration(f * float64(time.Second))
	}
	return out
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTimerSchedules(t *testing.T) {
	for _, tt := range []struct {
		name  string
		timer registry.TimerHandler
		work  time.Duration // how long each tick takes
		until time.Duration
		want  []time.Duration
	}{
		{"interval from the end of a tick", registry.TimerHandler{Interval: time.Second}, 300 * time.Millisecond, 3500 * time.Millisecond, secs(0, 1.3, 2.6)},
		{"sharp: on the grid", registry.TimerHandler{Interval: time.Second, Sharp: true}, 300 * time.Millisecond, 3500 * time.Millisecond, secs(0, 1, 2, 3)},
		{"sharp: a slow tick skips slots", registry.TimerHandler{Interval: time.Second, Sharp: true}, 1500 * time.Millisecond, 4500 * time.Millisecond, secs(0, 2, 4)},
		{"initial delay", registry.TimerHandler{Interval: time.Second, InitialDelay: 5 * time.Second}, 0, 7500 * time.Millisecond, secs(5, 6, 7)},
		{"initial delay as a function of the object", registry.TimerHandler{Interval: time.Second, InitialDelay: time.Hour, InitialDelayFn: func(kw *kwargs.Timer) time.Duration {
			if kw.Body == nil {
				return time.Hour
			}
			return 5 * time.Second
		}}, 0, 7500 * time.Millisecond, secs(5, 6, 7)},
		{"idle since the object appeared", registry.TimerHandler{Interval: time.Second, Idle: 3 * time.Second}, 0, 5500 * time.Millisecond, secs(3, 4, 5)},
		{"idle only: once per quiet period", registry.TimerHandler{Idle: 2 * time.Second}, 0, 10 * time.Second, secs(2)},
		{"one-shot: neither interval nor idle", registry.TimerHandler{InitialDelay: time.Second}, 0, 10 * time.Second, secs(1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, nil)
				th := tt.timer
				th.ID = "tick"
				th.Fn = func(ctx context.Context, kw *kwargs.Timer) (any, error) {
					h.mark()
					time.Sleep(tt.work)
					return nil, nil
				}
				h.o.Match(nil, []*registry.TimerHandler{&th})
				time.Sleep(tt.until)
				synctest.Wait()
				if got := h.startTimes(); !equalDurations(got, tt.want) {
					t.Errorf("ticks at %v, want %v", got, tt.want)
				}
				h.wantLog("Timer 'tick' succeeded.")
				h.e.Shutdown()
			})
		})
	}
}

// TestTimerOneShot: a timer with neither interval nor idle (Kopf's
// one-shot timer) is retried until it succeeds, then is done for the
// object and not restarted by matching again, as a daemon that returned.
func TestTimerOneShot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		calls := 0
		th := registry.TimerHandler{ID: "once", Backoff: 2 * time.Second, Fn: func(context.Context, *kwargs.Timer) (any, error) {
			h.mark()
			calls++
			if calls == 1 {
				return nil, errors.New("boom")
			}
			return "done", nil
		}}
		h.o.Match(nil, []*registry.TimerHandler{&th})
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got, want := h.startTimes(), secs(0, 2); !equalDurations(got, want) {
			t.Errorf("ticks at %v, want %v", got, want)
		}
		h.wantLog("Timer 'once' succeeded.")
		if !h.o.Done() {
			t.Error("a one-shot timer that succeeded is still running")
		}
		h.o.Match(nil, []*registry.TimerHandler{&th})
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if calls != 2 {
			t.Errorf("the timer ran %d times, want 2: it is restarted", calls)
		}
		h.e.Shutdown()
	})
}

func TestTimerIdlePostponedByChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		th := registry.TimerHandler{ID: "idle", Idle: 2 * time.Second, Fn: func(context.Context, *kwargs.Timer) (any, error) {
			h.mark()
			return nil, nil
		}}
		h.o.Match(nil, []*registry.TimerHandler{&th})
		time.Sleep(time.Second)
		h.o.Update(h.o.latestOwn(), true) // a change at 1 s: idle until 3 s
		time.Sleep(3 * time.Second)
		h.o.Update(h.o.latestOwn(), false) // status only: no reset
		time.Sleep(time.Second)
		h.o.Update(h.o.latestOwn(), true) // a change at 5 s: the next tick at 7 s
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if got, want := h.startTimes(), secs(3, 7); !equalDurations(got, want) {
			t.Errorf("ticks at %v, want %v", got, want)
		}
		h.e.Shutdown()
	})
}

func TestDaemonRetriesAndExitsForGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		calls := 0
		d := registry.DaemonHandler{ID: "worker", Backoff: 2 * time.Second, Fn: func(ctx context.Context, kw *kwargs.Daemon) (any, error) {
			h.mark()
			calls++
			switch calls {
			case 1:
				return nil, errors.New("boom")
			case 2:
				panic("a bug")
			}
			if kw.Retry != 2 || kw.Name != "obj" || kw.Labels["on"] != "yes" {
				t.Errorf("kwargs: retry %d, name %q, labels %v", kw.Retry, kw.Name, kw.Labels)
			}
			return map[string]any{"done": true}, nil
		}}
		h.o.Match([]*registry.DaemonHandler{&d}, nil)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got, want := h.startTimes(), secs(0, 2, 4); !equalDurations(got, want) {
			t.Errorf("attempts at %v, want %v", got, want)
		}
		h.wantLog("Daemon 'worker' failed with an exception and will try again in 2 seconds: boom")
		h.wantLog("Daemon 'worker' succeeded.")
		h.wantLog("Daemon 'worker' has exited on its own and will not be retried or restarted.")
		if !h.o.Done() {
			t.Error("a daemon that returned is still running")
		}
		if len(h.patch) != 1 || h.patch[0].Status()["worker"] == nil {
			t.Errorf("patches %v, want status.worker", h.patch)
		}
		// Matching again does not restart it.
		h.o.Match([]*registry.DaemonHandler{&d}, nil)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if calls != 3 {
			t.Errorf("the daemon ran %d times, want 3: it is restarted", calls)
		}
		h.e.Shutdown()
	})
}

// stopCase is a daemon and how it reacts to being stopped.
type stopCase struct {
	name    string
	handler registry.DaemonHandler
	// obeys says what the daemon waits for: "stopped", "ctx" or "nothing".
	obeys string
	// wantExit is when the object is released (all done) after the stop.
	wantExit time.Duration
	wantLogs []string
	abandon  bool
}

func TestDaemonStopEscalates(t *testing.T) {
	for _, tt := range []stopCase{
		{"obeys stopped", registry.DaemonHandler{CancellationBackoff: 5 * time.Second}, "stopped", 0,
			[]string{"Daemon 'd' is signalled to exit gracefully.", "Daemon 'd' has exited on request and will not be retried or restarted."}, false},
		{"obeys ctx, after the backoff", registry.DaemonHandler{CancellationBackoff: 5 * time.Second}, "ctx", 5 * time.Second,
			[]string{"Daemon 'd' is signalled to exit gracefully.", "Daemon 'd' is signalled to exit by force.", "Daemon 'd' is cancelled. Will escalate."}, false},
		{"obeys ctx, no backoff", registry.DaemonHandler{}, "ctx", 0,
			[]string{"Daemon 'd' is signalled to exit by force."}, false},
		{"ignores all: released after backoff and timeout", registry.DaemonHandler{CancellationBackoff: 2 * time.Second, CancellationTimeout: 3 * time.Second}, "nothing", 5 * time.Second,
			[]string{"Daemon 'd' did not exit in time. Leaving it orphaned."}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, nil)
				release := make(chan struct{})
				d := tt.handler
				d.ID = "d"
				d.Fn = func(ctx context.Context, kw *kwargs.Daemon) (any, error) {
					switch tt.obeys {
					case "stopped":
						<-kw.Stopped.Done()
						if cause := context.Cause(kw.Stopped); cause != kwargs.StopDeleted {
							t.Errorf("the cause is %v, want StopDeleted", cause)
						}
						return nil, nil
					case "ctx":
						<-ctx.Done()
						return nil, ctx.Err()
					}
					<-release
					return nil, nil
				}
				h.o.Match([]*registry.DaemonHandler{&d}, nil)
				time.Sleep(time.Second)
				stopAt := time.Now()
				if h.o.Stop(kwargs.StopDeleted) && tt.wantExit > 0 {
					t.Error("Stop reports the daemon done at once")
				}
				// Poll in fake time for the release.
				for synctest.Wait(); !h.o.Done(); synctest.Wait() {
					time.Sleep(100 * time.Millisecond)
				}
				if got := time.Since(stopAt); got != tt.wantExit && !(tt.wantExit == 0 && got == 0) {
					t.Errorf("released after %v, want %v", got, tt.wantExit)
				}
				synctest.Wait()
				if h.wakeCount() != 1 {
					t.Errorf("woken %d times, want once", h.wakeCount())
				}
				for _, l := range tt.wantLogs {
					h.wantLog(l)
				}
				if len(h.stops) != 1 || h.stops[0].Abandoned != tt.abandon || h.stops[0].Latency != tt.wantExit ||
					h.stops[0].Resource != "kopfexamples.v1.kopf.dev" || h.stops[0].Kind != "daemon" {
					t.Errorf("stops %+v", h.stops)
				}
				close(release)
				synctest.Wait()
				if len(h.patch) != 0 {
					t.Errorf("an orphaned or stopped daemon's outcome is applied: %v", h.patch)
				}
				h.e.Shutdown()
			})
		})
	}
}

func TestTimerStopsAtOnceBetweenTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		th := registry.TimerHandler{ID: "t", Interval: time.Hour, Fn: func(context.Context, *kwargs.Timer) (any, error) {
			h.mark()
			return "ok", nil
		}}
		h.o.Match(nil, []*registry.TimerHandler{&th})
		time.Sleep(time.Minute) // mid-interval
		if !h.o.Stop(kwargs.StopDeleted) {
			t.Error("a timer waiting for its next tick is not done at once")
		}
		if len(h.patch) != 1 || h.patch[0].Status()["t"] != "ok" {
			t.Errorf("patches %v, want status.t", h.patch)
		}
		// Deleted: matching starts nothing any more.
		h.o.Match(nil, []*registry.TimerHandler{&th})
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if n := len(h.startTimes()); n != 1 {
			t.Errorf("%d ticks, want 1", n)
		}
		h.e.Shutdown()
	})
}

func TestFiltersStartAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		var causes []error
		var mu sync.Mutex
		d := registry.DaemonHandler{ID: "d", When: func(kw *kwargs.Daemon) bool { return kw.Labels["on"] == "yes" }, Fn: func(ctx context.Context, kw *kwargs.Daemon) (any, error) {
			h.mark()
			<-kw.Stopped.Done()
			mu.Lock()
			causes = append(causes, context.Cause(kw.Stopped))
			mu.Unlock()
			return nil, nil
		}}
		panicky := registry.DaemonHandler{ID: "p", When: func(*kwargs.Daemon) bool { panic("when") }, Fn: d.Fn}
		set := func(on string) {
			b := h.o.latestOwn().DeepCopy()
			b.Meta()["labels"] = map[string]any{"on": on}
			h.o.Update(b, true)
		}
		if !h.o.Match([]*registry.DaemonHandler{&d, &panicky}, nil) {
			t.Error("a matching daemon is not reported")
		}
		synctest.Wait()
		set("no")
		if h.o.Match([]*registry.DaemonHandler{&d, &panicky}, nil) {
			t.Error("a mismatching daemon is reported as matching")
		}
		synctest.Wait()
		if h.wakeCount() != 1 || !h.o.Done() {
			t.Errorf("after the mismatch: %d wakes, running %v", h.wakeCount(), h.o.Running())
		}
		set("yes")
		h.o.Match([]*registry.DaemonHandler{&d, &panicky}, nil)
		synctest.Wait()
		if n := len(h.startTimes()); n != 2 {
			t.Errorf("the daemon started %d times, want 2", n)
		}
		h.e.Shutdown()
		mu.Lock()
		defer mu.Unlock()
		if len(causes) != 2 || causes[0] != kwargs.StopFiltersMismatch || causes[1] != kwargs.StopOperatorExiting {
			t.Errorf("stop causes %v", causes)
		}
		if strings.Count(h.log.String(), "The filters of 'p' failed") != 1 {
			t.Errorf("a panicking when= is not reported once:\n%s", h.log.String())
		}
	})
}

func TestShutdownIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(s *settings.Settings) { s.Background.ExitTimeout = 3 * time.Second })
		hang := make(chan struct{})
		obedient := registry.DaemonHandler{ID: "obedient", Fn: func(ctx context.Context, kw *kwargs.Daemon) (any, error) {
			<-ctx.Done()
			return nil, nil
		}}
		stubborn := registry.DaemonHandler{ID: "stubborn", Fn: func(ctx context.Context, kw *kwargs.Daemon) (any, error) {
			<-hang
			return nil, nil
		}}
		waiting := registry.TimerHandler{ID: "waiting", Interval: time.Hour, Fn: func(context.Context, *kwargs.Timer) (any, error) { return nil, nil }}
		h.o.Match([]*registry.DaemonHandler{&obedient, &stubborn}, []*registry.TimerHandler{&waiting})
		time.Sleep(time.Second)
		start := time.Now()
		h.e.Shutdown()
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("Shutdown took %v, want the exit timeout, 3s", took)
		}
		if n := h.e.Running(); n != 0 {
			t.Errorf("%d runners left", n)
		}
		h.wantLog("Daemon 'stubborn' did not exit in time. Leaving it orphaned.")
		h.wantLog("Daemon 'obedient' has exited gracefully.")
		// Nothing starts after the exit.
		other := registry.DaemonHandler{ID: "late", Fn: obedient.Fn}
		h.o.Match([]*registry.DaemonHandler{&other}, nil)
		if n := h.e.Running(); n != 0 {
			t.Errorf("a daemon started after the exit")
		}
		close(hang)
	})
}

func TestPauseAndResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		d := registry.DaemonHandler{ID: "d", Fn: func(ctx context.Context, kw *kwargs.Daemon) (any, error) {
			h.mark()
			<-ctx.Done()
			if context.Cause(kw.Stopped) != kwargs.StopOperatorPausing && context.Cause(kw.Stopped) != kwargs.StopOperatorExiting {
				t.Errorf("cause %v", context.Cause(kw.Stopped))
			}
			return nil, nil
		}}
		h.o.Match([]*registry.DaemonHandler{&d}, nil)
		synctest.Wait()
		h.e.Pause()
		synctest.Wait()
		h.o.Match([]*registry.DaemonHandler{&d}, nil) // paused: nothing starts
		synctest.Wait()
		if !h.o.Done() {
			t.Error("a daemon runs while paused")
		}
		h.e.Resume()
		if h.wakeCount() != 1 {
			t.Errorf("Resume woke %d times, want once", h.wakeCount())
		}
		h.o.Match([]*registry.DaemonHandler{&d}, nil)
		synctest.Wait()
		if n := len(h.startTimes()); n != 2 {
			t.Errorf("started %d times, want 2", n)
		}
		h.e.Shutdown()
	})
}

func TestObserveAndLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		var got []string
		h.o.host.Observe = func(_ body.Body, handler, kind string, retry int, out execution.Outcome, interrupted bool) {
			h.mu.Lock()
			defer h.mu.Unlock()
			if out.Success {
				got = append(got, kind+" "+handler)
			}
		}
		th := registry.TimerHandler{ID: "t", Interval: time.Second, Fn: func(context.Context, *kwargs.Timer) (any, error) { return nil, nil }}
		h.o.Match(nil, []*registry.TimerHandler{&th})
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait()
		h.e.Shutdown()
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(got) != 3 || got[0] != "timer t" {
			t.Errorf("observed %v", got)
		}
		if len(h.ticks) != 3 {
			t.Errorf("ticks %v", h.ticks)
		}
		for _, tk := range h.ticks {
			if tk.Lag != 0 { // fake time: no lag
				t.Errorf("lag %v", tk.Lag)
			}
			if tk.Resource != "kopfexamples.v1.kopf.dev" || tk.Handler != "t" {
				t.Errorf("tick of %q/%q, want kopfexamples.v1.kopf.dev/t", tk.Resource, tk.Handler)
			}
		}
	})
}
