package reactor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
	"github.com/kopf-go/kopf/runtime/watching"
)

// BenchmarkWaitingTimers measures the heap that the reactor and the
// daemons' engine keep per object (b.N objects) once each object's timer
// has ticked and waits for its next tick (an hour away), against the same
// objects served by an on.event handler that keeps each one's latest body
// (the watched object, as the daemons' runtime keeps it). The objects
// carry the finalizer already (as the timers leave it), so no patch is
// made. Without the API: bench/cmd/daemons measures the whole operator.
//
//	go test -run '^$' -bench WaitingTimers -benchtime 10000x ./runtime/reactor/
//
// KOPF_BENCH_HEAPPROFILE=path writes each mode's heap profile to
// path.<mode> (with -memprofilerate=1: every allocation).
func BenchmarkWaitingTimers(b *testing.B) {
	for _, mode := range []string{"watched", "timers"} {
		b.Run(mode, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := b.N
			var ticked atomic.Int64
			all := make(chan struct{})
			var kept sync.Map
			reg := registry.New()
			sel := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
			var err error
			if mode == "watched" {
				err = reg.AddEvent(registry.EventHandler{ID: "keep", Selector: sel, Fn: func(_ context.Context, kw *kwargs.Event) error {
					kept.Store(kw.UID, kw.Body)
					return nil
				}})
				close(all)
			} else {
				err = reg.AddTimer(registry.TimerHandler{ID: "tick", Selector: sel, Interval: time.Hour, Fn: func(context.Context, *kwargs.Timer) (any, error) {
					if ticked.Add(1) == int64(n) {
						close(all)
					}
					return nil, nil
				}})
			}
			if err != nil {
				b.Fatal(err)
			}
			logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
			s := settings.Default()
			res := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
			r := &Reactor{Resource: res, Client: nopClient{}, Registry: reg, Settings: s, Logger: logger, Daemons: daemons.NewEngine(ctx, s, logger)}
			before := settledHeap()
			for i := range n {
				obj := timerObject(i, s.Persistence.Finalizer)
				r.process(ctx, watching.Event{Type: watching.Added, Key: obj.Meta().Namespace() + "/" + obj.Meta().Name(), Object: obj, Initial: true}, &queueing.Stream{})
			}
			select {
			case <-all:
			case <-time.After(time.Minute):
				b.Fatalf("%d of %d timers ticked", ticked.Load(), n)
			}
			after := settledHeap()
			b.ReportMetric(float64(after-before)/float64(n), "heap-B/object")
			if path := os.Getenv("KOPF_BENCH_HEAPPROFILE"); path != "" {
				writeHeapProfile(b, path+"."+mode)
			}
			runtime.KeepAlive(r)
			runtime.KeepAlive(&kept)
			r.Daemons.Shutdown()
		})
	}
}

// timerObject is a small KopfExample, as bench/cmd/daemons creates them,
// with the finalizer.
func timerObject(i int, finalizer string) body.Body {
	name := fmt.Sprintf("obj-%05d", i)
	return body.Body{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{
			"name": name, "namespace": "default", "uid": fmt.Sprintf("0b8d2c6e-0000-4000-8000-%012d", i), "resourceVersion": fmt.Sprint(1000 + i),
			"generation": float64(1), "creationTimestamp": "2026-11-28T03:00:00Z", "finalizers": []any{finalizer},
		},
		"spec": map[string]any{"field": "value"},
	}
}

// writeHeapProfile writes the heap profile to path: with
// -test.memprofilerate=1, every allocation is in it.
func writeHeapProfile(b *testing.B, path string) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

func settledHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkTimerTick measures one tick of a timer (allocs/op, B/op: every
// allocation of the tick, on the Go runtime's timer goroutines included):
// the reactor's daemons host, the engine's runner, the user's copy of the
// body and its kwargs, the handler's call, the log lines and the patch of
// its result. The object carries the finalizer; the timer's interval is a
// nanosecond, so that the ticks follow each other. Cases: the log level
// at ERROR (as bench/cmd/daemons runs: "Timer 'tick' succeeded." is
// filtered out) or at INFO (the default: it is written, to io.Discard),
// the handler returning nothing or a result (stored by a patch, through a
// client that accepts it at once), and the 2 KB object of BenchmarkCycle.
//
//	go test -run '^$' -bench TimerTick -benchmem ./runtime/reactor/
func BenchmarkTimerTick(b *testing.B) {
	finalizer := settings.Default().Persistence.Finalizer
	small := func() body.Body { return timerObject(0, finalizer) }
	large := func() body.Body {
		obj := benchObject()
		obj.Meta()["finalizers"] = []any{finalizer}
		return obj
	}
	cases := []struct {
		name   string
		level  slog.Level
		obj    func() body.Body
		result any
	}{
		{"quiet", slog.LevelError, small, nil},
		{"info", slog.LevelInfo, small, nil},
		{"result", slog.LevelError, small, map[string]any{"ticked": true}},
		{"quiet-2KB", slog.LevelError, large, nil},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			benchTicks(b, c.level, c.obj(), c.result)
		})
	}
}

// benchTicks runs b.N ticks of one timer of one object, after its first
// tick (which starts the runner) and outside the timed part.
func benchTicks(b *testing.B, level slog.Level, obj body.Body, result any) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ticks atomic.Int64
	var last int64 // set before gate is closed
	reached := make(chan struct{}, 1)
	gate := make(chan struct{})
	reg := registry.New()
	sel := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	err := reg.AddTimer(registry.TimerHandler{ID: "tick", Selector: sel, Interval: time.Nanosecond, Fn: func(context.Context, *kwargs.Timer) (any, error) {
		switch ticks.Add(1) {
		case 1:
			reached <- struct{}{}
			<-gate
		case last:
			reached <- struct{}{}
		}
		return result, nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: level}))
	s := settings.Default()
	res := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	r := &Reactor{Resource: res, Client: nopClient{}, Registry: reg, Settings: s, Logger: logger, Daemons: daemons.NewEngine(ctx, s, logger)}
	defer r.Daemons.Shutdown()
	r.process(ctx, watching.Event{Type: watching.Added, Key: "default/" + obj.Meta().Name(), Object: obj, Initial: true}, &queueing.Stream{})
	<-reached
	last = 1 + int64(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	close(gate)
	<-reached
	b.StopTimer()
}
