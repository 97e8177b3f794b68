package watching

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// inactive wraps a watch so that it ends when nothing (not even a bookmark)
// arrives for the timeout (if there is one), and tells of every event and
// of the stream's end (for Watcher.Status). A watch stream can go silent without being
// closed (a dead TCP peer behind a proxy, a stuck API server); the
// reflector then re-establishes it from the last seen resourceVersion.
// The API server sends bookmarks about once a minute to watches that ask
// for them (the reflector does), so a healthy idle watch is not cut.
type inactive struct {
	inner   watch.Interface
	out     chan watch.Event
	stop    chan struct{}
	once    sync.Once
	onStall func()
	onEvent func() // may be nil
	onEnd   func() // may be nil; called before the channel is closed
}

func withInactivityTimeout(w watch.Interface, timeout time.Duration, onStall func()) watch.Interface {
	return tracked(w, timeout, onStall, nil, nil)
}

// tracked wraps w with the inactivity timeout (none if 0), calling onEvent
// for every event and onEnd once the stream has ended, whatever ended it.
func tracked(w watch.Interface, timeout time.Duration, onStall, onEvent, onEnd func()) watch.Interface {
	if timeout <= 0 && onEvent == nil && onEnd == nil {
		return w
	}
	iw := &inactive{inner: w, out: make(chan watch.Event), stop: make(chan struct{}), onStall: onStall, onEvent: onEvent, onEnd: onEnd}
	go iw.run(timeout)
	return iw
}

func (w *inactive) run(timeout time.Duration) {
	defer close(w.out)
	if w.onEnd != nil {
		defer w.onEnd()
	}
	defer w.inner.Stop()
	var timer *time.Timer
	var expired <-chan time.Time // nil without a timeout: never
	if timeout > 0 {
		timer = time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
	}
	in := w.inner.ResultChan()
	for {
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			if w.onEvent != nil {
				w.onEvent()
			}
			if timer != nil {
				if !timer.Stop() {
					select {
					case <-timer.C:
					default:
					}
				}
				timer.Reset(timeout)
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		case <-expired:
			if w.onStall != nil {
				w.onStall()
			}
			return
		case <-w.stop:
			return
		}
	}
}

func (w *inactive) Stop() { w.once.Do(func() { close(w.stop) }) }

func (w *inactive) ResultChan() <-chan watch.Event { return w.out }

// trackedDecoder does what tracked does for a watch whose events come from
// a decoder of this package, without a goroutine of its own: the stream
// watcher's goroutine calls onEvent and re-arms the inactivity timer as it
// decodes each event, and the timer, when it fires, closes the stream.
// Every event then reaches the reflector with one goroutine hand-over
// fewer (a wake-up of another goroutine per event, which in the steady
// state, one event at a time, costs more than the event's decoding).
type trackedDecoder struct {
	watch.Decoder
	timeout time.Duration
	timer   *time.Timer // nil without a timeout
	onEvent func()      // may be nil
	onEnd   func()      // may be nil; called once, before the stream watcher's channel is closed
	ended   sync.Once
	stalled atomic.Bool // the timer has closed the stream
	closed  atomic.Bool // Close was called (the watch is stopped)
}

// trackDecoder wraps d as tracked wraps a watch (see there). The timer
// starts now: the stream is open.
func trackDecoder(d watch.Decoder, timeout time.Duration, onStall, onEvent, onEnd func()) watch.Decoder {
	if timeout <= 0 && onEvent == nil && onEnd == nil {
		return d
	}
	td := &trackedDecoder{Decoder: d, timeout: timeout, onEvent: onEvent, onEnd: onEnd}
	if timeout > 0 {
		td.timer = time.AfterFunc(timeout, func() {
			td.stalled.Store(true)
			if onStall != nil {
				onStall()
			}
			td.Decoder.Close() // ends a Decode waiting for the body
		})
	}
	return td
}

// Decode returns the next event. After a stall or a Stop, it ends the
// stream as the server's end of it does (io.EOF: the reflector renews the
// watch from the last resourceVersion it saw, without an error), dropping
// an event decoded as the timer fired, as tracked does.
func (d *trackedDecoder) Decode() (watch.EventType, runtime.Object, error) {
	typ, obj, err := d.Decoder.Decode()
	if d.stalled.Load() || d.closed.Load() {
		d.end()
		return "", nil, io.EOF
	}
	if err != nil {
		d.end()
		return typ, obj, err
	}
	if d.onEvent != nil {
		d.onEvent()
	}
	if d.timer != nil {
		d.timer.Reset(d.timeout)
	}
	return typ, obj, nil
}

// Close is called by the stream watcher's Stop (and as it exits).
func (d *trackedDecoder) Close() {
	d.closed.Store(true)
	d.Decoder.Close()
	d.end()
}

func (d *trackedDecoder) end() {
	d.ended.Do(func() {
		if d.timer != nil {
			d.timer.Stop()
		}
		if d.onEnd != nil {
			d.onEnd()
		}
	})
}
