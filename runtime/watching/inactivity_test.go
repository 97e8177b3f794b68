package watching

import (
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// A silent watch is ended and reported; events (bookmarks included) pass
// through and keep it alive.
// It runs in a synctest bubble: the delays are exact, none is slept.
func TestInactivityTimeout(t *testing.T) { synctest.Test(t, testInactivityTimeout) }

func testInactivityTimeout(t *testing.T) {
	fake := watch.NewFake()
	stalled := make(chan struct{})
	w := withInactivityTimeout(fake, 2*time.Second, func() { close(stalled) })

	var last time.Time // when the last event passed
	for range 3 {      // activity within the timeout keeps the watch open
		go fake.Action(watch.Bookmark, object("ns", "a", "1"))
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Bookmark {
				t.Fatalf("got %v, want the bookmark", ev.Type)
			}
			last = time.Now()
		case <-time.After(5 * time.Second):
			t.Fatal("the event did not pass through")
		}
		time.Sleep(1900 * time.Millisecond) // just short of the timeout
		select {
		case <-stalled:
			t.Fatal("an active watch is reported as silent")
		default:
		}
	}
	select {
	case <-stalled:
	case <-time.After(5 * time.Second):
		t.Fatal("the silent watch is not reported")
	}
	if silent := time.Since(last); silent != 2*time.Second {
		t.Errorf("reported after %s of silence, want 2s", silent)
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

func TestNoInactivityTimeout(t *testing.T) { // and nothing to tell of events
	fake := watch.NewFake()
	if w := withInactivityTimeout(fake, 0, nil); w != watch.Interface(fake) {
		t.Error("a zero timeout wraps the watch")
	}
}
