package watching

import (
	"sync"
	"time"

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
