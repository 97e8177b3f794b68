package watching

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// inactive wraps a watch so that it ends when nothing (not even a bookmark)
// arrives for the timeout. A watch stream can go silent without being
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
}

func withInactivityTimeout(w watch.Interface, timeout time.Duration, onStall func()) watch.Interface {
	if timeout <= 0 {
		return w
	}
	iw := &inactive{inner: w, out: make(chan watch.Event), stop: make(chan struct{}), onStall: onStall}
	go iw.run(timeout)
	return iw
}

func (w *inactive) run(timeout time.Duration) {
	defer close(w.out)
	defer w.inner.Stop()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	in := w.inner.ResultChan()
	for {
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			timer.Reset(timeout)
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		case <-timer.C:
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
