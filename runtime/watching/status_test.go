package watching

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
)

// The tracker's transitions, one step a second in a synctest bubble: each
// step's effect on the Status.
func TestStatusTracker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var tr tracker
		start := time.Now()
		at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
		boom := errors.New("boom")
		var first, second uint64
		steps := []struct {
			name string
			do   func()
			want Status
		}{
			{"run", tr.run, Status{Started: at(0), Since: at(0)}},
			{"a failure", func() { tr.failed(boom) }, Status{Started: at(0), Since: at(0), Failures: 1, LastError: boom}},
			{"another", func() { tr.failed(boom) }, Status{Started: at(0), Since: at(0), Failures: 2, LastError: boom}},
			{"the first stream", func() { first = tr.opened() }, Status{Started: at(0), Watching: true, Since: at(3)}},
			{"an event", tr.event, Status{Started: at(0), Watching: true, Since: at(3), LastEvent: at(4), Events: 1}},
			{"the listing", tr.listed, Status{Started: at(0), Watching: true, Since: at(3), Listed: at(5), LastEvent: at(4), Events: 1}},
			{"its end", func() { tr.closed(first) }, Status{Started: at(0), Since: at(6), Listed: at(5), LastEvent: at(4), Events: 1}},
			{"a restart", func() { second = tr.opened() }, Status{Started: at(0), Watching: true, Since: at(7), Listed: at(5), LastEvent: at(4), Events: 1, Restarts: 1}},
			{"a late end of the first", func() { tr.closed(first) }, Status{Started: at(0), Watching: true, Since: at(7), Listed: at(5), LastEvent: at(4), Events: 1, Restarts: 1}},
			{"the second's end", func() { tr.closed(second) }, Status{Started: at(0), Since: at(9), Listed: at(5), LastEvent: at(4), Events: 1, Restarts: 1}},
			{"a failed watch", func() { tr.failed(boom) }, Status{Started: at(0), Since: at(9), Listed: at(5), LastEvent: at(4), Events: 1, Restarts: 1, Failures: 1, LastError: boom}},
			{"a relisting", tr.listed, Status{Started: at(0), Since: at(9), Listed: at(11), LastEvent: at(4), Events: 1, Restarts: 1}},
		}
		for i, s := range steps {
			if i > 0 {
				time.Sleep(time.Second)
			}
			s.do()
			if got := tr.get(); got != s.want {
				t.Errorf("after %s:\n got %+v\nwant %+v", s.name, got, s.want)
			}
		}
	})
}

// The stream wrapper tells of every event and of the end, however the
// stream ends, with or without an inactivity timeout.
func TestTrackedStream(t *testing.T) {
	endings := []struct {
		name    string
		timeout time.Duration
		end     func(fake *watch.FakeWatcher, w watch.Interface)
	}{
		{"closed by the server", 0, func(fake *watch.FakeWatcher, _ watch.Interface) { fake.Stop() }},
		{"stopped by the reflector", 0, func(_ *watch.FakeWatcher, w watch.Interface) { w.Stop() }},
		{"silent past the timeout", 2 * time.Second, func(*watch.FakeWatcher, watch.Interface) {}},
	}
	for _, e := range endings {
		t.Run(e.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := watch.NewFake()
				var events, ends atomic.Int32
				w := tracked(fake, e.timeout, func() {}, func() { events.Add(1) }, func() { ends.Add(1) })
				go fake.Action(watch.Bookmark, object("ns", "a", "1"))
				<-w.ResultChan()
				e.end(fake, w)
				for range w.ResultChan() {
				}
				synctest.Wait()
				if events.Load() != 1 || ends.Load() != 1 {
					t.Errorf("told of %d events and %d ends, want 1 and 1", events.Load(), ends.Load())
				}
			})
		})
	}
}

// Watcher.Status through a real watcher over REST: a listing and a stream,
// then failing requests (counted, the stream down), then a stream again.
func TestWatcherStatus(t *testing.T) {
	var failing atomic.Bool
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			writeJSON(w, 503, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"unavailable","reason":"ServiceUnavailable","code":503}`)
			return
		}
		if r.URL.Query().Get("watch") != "true" {
			writeJSON(w, 200, `{"apiVersion":"kopf.dev/v1","kind":"KopfExampleList","metadata":{"resourceVersion":"1"},"items":[`+kopfExample("a", "1")+`]}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("sendInitialEvents") == "true" {
			_, _ = fmt.Fprint(w, frame("ADDED", kopfExample("a", "1"))+frame("BOOKMARK", `{"kind":"KopfExample","apiVersion":"kopf.dev/v1","metadata":{"resourceVersion":"1","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}`))
		}
		w.(http.Flusher).Flush()
		for !failing.Load() && r.Context().Err() == nil { // a stream that ends when told to fail
			time.Sleep(10 * time.Millisecond)
		}
	}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	w := &Watcher{REST: restClient(t, srv.URL), Path: examplesPath, Callback: func(Event) {}, Name: "test"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	s := await(t, w, "listed and watching", func(s Status) bool { return s.Watching && !s.Listed.IsZero() })
	if s.Events == 0 || s.LastEvent.IsZero() || s.Failures != 0 || s.Started.IsZero() {
		t.Errorf("listed and watching: %+v", s)
	}
	failing.Store(true)
	s = await(t, w, "failing", func(s Status) bool { return !s.Watching && s.Failures > 0 })
	if s.LastError == nil || s.Since.Before(s.Listed) {
		t.Errorf("failing: %+v", s)
	}
	failing.Store(false)
	s = await(t, w, "watching again", func(s Status) bool { return s.Watching })
	if s.Restarts == 0 || s.Failures != 0 || s.LastError != nil {
		t.Errorf("watching again: %+v", s)
	}
}

func await(t *testing.T, w *Watcher, what string, cond func(Status) bool) Status {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := w.Status()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("not %s in 20 s: %+v", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The decoder wrapper of the REST path does what the stream wrapper does,
// from the stream watcher's own goroutine: it tells of every event and of
// the end, however the stream ends, and a silent stream past the timeout
// is reported and ends as the server's end does (no error event).
func TestTrackedDecoder(t *testing.T) {
	endings := []struct {
		name    string
		timeout time.Duration
		end     func(body *io.PipeWriter, w watch.Interface)
		stalls  int32
	}{
		{"closed by the server", 0, func(body *io.PipeWriter, _ watch.Interface) { body.Close() }, 0},
		{"stopped by the reflector", time.Minute, func(_ *io.PipeWriter, w watch.Interface) { w.Stop() }, 0},
		{"silent past the timeout", 2 * time.Second, func(*io.PipeWriter, watch.Interface) {}, 1},
	}
	for _, e := range endings {
		t.Run(e.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pr, pw := io.Pipe()
				var events, ends, stalls atomic.Int32
				dec := trackDecoder(newEventDecoder(pr), e.timeout, func() { stalls.Add(1) }, func() { events.Add(1) }, func() { ends.Add(1) })
				w := watch.NewStreamWatcher(dec, apierrors.NewClientErrorReporter(500, "GET", "test"))
				go func() { _, _ = io.WriteString(pw, frame("ADDED", kopfExample("a", "1"))) }()
				if ev := <-w.ResultChan(); ev.Type != watch.Added {
					t.Fatalf("got %v, want the event", ev.Type)
				}
				e.end(pw, w)
				for ev := range w.ResultChan() {
					t.Errorf("an event after the end: %v", ev.Type)
				}
				synctest.Wait()
				if events.Load() != 1 || ends.Load() != 1 || stalls.Load() != e.stalls {
					t.Errorf("told of %d events, %d ends and %d stalls, want 1, 1 and %d", events.Load(), ends.Load(), stalls.Load(), e.stalls)
				}
				pw.Close()
			})
		})
	}
}
