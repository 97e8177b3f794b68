package apiserver

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLimitInFlight(t *testing.T) {
	var current, peak atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			return // answers at once, so it must not queue behind the others
		}
		n := current.Add(1)
		defer current.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
	}))
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: LimitInFlight(3)(http.DefaultTransport)}

	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if resp, err := client.Get(srv.URL + "/api"); err == nil {
				resp.Body.Close()
			}
		})
	}
	// Watches are not limited: with 3 requests in flight, one still passes.
	watched := make(chan struct{})
	go func() {
		if resp, err := client.Get(srv.URL + "/api?watch=true"); err == nil {
			resp.Body.Close()
		}
		close(watched)
	}()
	select {
	case <-watched:
	case <-time.After(10 * time.Second):
		t.Fatal("a watch request queued behind the limited ones")
	}
	// The others pile up at the limit.
	deadline := time.Now().Add(10 * time.Second)
	for current.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests in flight, want 3", current.Load())
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if p := peak.Load(); p != 3 {
		t.Errorf("peak in-flight requests = %d, want 3", p)
	}
}
