package watching

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// A silent watch is ended and reported; events (bookmarks included) pass
// through and keep it alive.
func TestInactivityTimeout(t *testing.T) {
	fake := watch.NewFake()
	stalled := make(chan struct{})
	w := withInactivityTimeout(fake, 2*time.Second, func() { close(stalled) })

	for range 3 { // activity within the timeout keeps the watch open
		go fake.Action(watch.Bookmark, object("ns", "a", "1"))
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Bookmark {
				t.Fatalf("got %v, want the bookmark", ev.Type)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the event did not pass through")
		}
		time.Sleep(200 * time.Millisecond)
	}
	select {
	case <-stalled:
	case <-time.After(5 * time.Second):
		t.Fatal("the silent watch is not reported")
	}
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Error("an event after the stall")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the silent watch is not closed")
	}
	if !fake.IsStopped() {
		t.Error("the underlying watch is not stopped")
	}
}

func TestNoInactivityTimeout(t *testing.T) {
	fake := watch.NewFake()
	if w := withInactivityTimeout(fake, 0, nil); w != watch.Interface(fake) {
		t.Error("a zero timeout wraps the watch")
	}
}
