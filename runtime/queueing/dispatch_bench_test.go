package queueing

import (
	"context"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/kopf-go/kopf/runtime/watching"
)

// BenchmarkDispatch measures the queue's own cost per object: the Queue
// against the smallest dispatch on client-go's workqueue (a map of the
// latest event per key for Kopf's batching, Add, a fixed pool of
// WorkerLimit workers: Get, process, Forget, Done), with a processor that
// does nothing but count. The difference is what the Queue adds: the
// Stream (expectation, requeue), Busy, Stats. The queue's cost is measured
// apart from the operator's (the API requests and the JSON, which bench/
// measures whole).
//
//   - catchup: 1,000 objects put at once (the first listing of an
//     operator's catch-up), then waited for;
//   - paced: 1,000 objects put one at a time, each waited for before the
//     next (a worker woken per object, as at a paced creation rate).
//
// ns/object is the wall time per object, cpu-ns/object the process's CPU
// time (user and system, every thread, the GC's included) per object.
//
// The figures of the package doc's choice (issue 23): this benchmark's
// binary at the commit before the Queue (its "multiplexer") and after it
// ("queue"), run in turns, 8 times each, on the project's loaded 2-core
// machine, compared with benchstat (new/old; the workqueue dispatch,
// the same code in both binaries, is the control: 1.01 and 1.12):
//
//	                  CPU/object        wall/object       allocs/1,000 objects
//	catchup           3.2 µs / 5.6 µs   2.6 µs / 3.3 µs   1,012 / 4,394
//	                  = 0.58 (p=0.010)  = 0.78 (p<0.001)
//	paced             3.6 µs / 6.6 µs   3.2 µs / 6.1 µs   2,000 / 9,990
//	                  = 0.55 (p<0.001)  = 0.53 (p<0.001)
func BenchmarkDispatch(b *testing.B) {
	const n = 1000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "ns/obj-" + strconv.Itoa(i)
	}
	for _, d := range []struct {
		name string
		new  func(ctx context.Context, done func()) dispatcher
	}{
		{"queue", func(ctx context.Context, done func()) dispatcher {
			return New(ctx, Options{IdleTimeout: 5 * time.Second, WorkerLimit: 64},
				func(context.Context, watching.Event, *Stream) { done() })
		}},
		{"workqueue", func(ctx context.Context, done func()) dispatcher {
			return newWorkqueueDispatcher(ctx, 64, func(watching.Event) { done() })
		}},
	} {
		for _, paced := range []bool{false, true} {
			name := d.name + "/catchup"
			if paced {
				name = d.name + "/paced"
			}
			b.Run(name, func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var wg sync.WaitGroup
				q := d.new(ctx, wg.Done)
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					for _, key := range keys {
						wg.Add(1)
						q.Put(watching.Event{Type: watching.Added, Key: key})
						if paced {
							wg.Wait()
						}
					}
					wg.Wait()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/object")
				b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*n), "cpu-ns/object")
				q.Close()
				cancel()
				q.Wait()
			})
		}
	}
}

// cpuTime is the CPU time the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type dispatcher interface {
	Put(watching.Event)
	Close()
	Wait()
}

// workqueueDispatcher is the Queue's dispatch on client-go's workqueue,
// as small as it can be: the latest event per key (batching), one key
// processed at a time (the workqueue's guarantee), a fixed pool of
// workers. It lacks what the Queue adds (the Stream's expectation and
// requeue, Busy and Stats, unbounded workers).
type workqueueDispatcher struct {
	q  workqueue.TypedRateLimitingInterface[string]
	mu sync.Mutex
	// latest is the pending event of each key.
	latest map[string]watching.Event
	wg     sync.WaitGroup
}

func newWorkqueueDispatcher(ctx context.Context, workers int, process func(watching.Event)) *workqueueDispatcher {
	d := &workqueueDispatcher{
		q: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "bench"}),
		latest: map[string]watching.Event{},
	}
	go func() { <-ctx.Done(); d.q.ShutDown() }()
	for range workers {
		d.wg.Go(func() {
			for {
				key, quit := d.q.Get()
				if quit {
					return
				}
				d.mu.Lock()
				ev, ok := d.latest[key]
				delete(d.latest, key)
				d.mu.Unlock()
				if ok {
					process(ev)
				}
				d.q.Forget(key)
				d.q.Done(key)
			}
		})
	}
	return d
}

func (d *workqueueDispatcher) Put(ev watching.Event) {
	d.mu.Lock()
	if prev, ok := d.latest[ev.Key]; ok && prev.Initial {
		ev.Initial = true
	}
	d.latest[ev.Key] = ev
	d.mu.Unlock()
	d.q.Add(ev.Key)
}

func (d *workqueueDispatcher) Close() { d.q.ShutDown() }
func (d *workqueueDispatcher) Wait()  { d.wg.Wait() }
