package apiserver

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// 429s are reported at once, then paced while they go on; answers between
// them do not end the throttling, an answer after a quiet time does, once.
func TestThrottlingReports(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &records{}
		th := NewThrottling("https://api:6443", slog.New(rec), time.Minute)
		start := time.Now()
		for range 3 { // 0 s: three at once
			th.throttled(time.Now(), "PATCH /apis/x", time.Second)
		}
		th.answered(time.Now()) // answered meanwhile: still throttled
		time.Sleep(1500 * time.Millisecond)
		th.throttled(time.Now(), "GET /api", 2*time.Second) // 1.5 s: reported (1 s passed)
		time.Sleep(time.Second)
		th.throttled(time.Now(), "GET /api", time.Second) // 2.5 s: paced (next at 3.5 s)
		time.Sleep(4 * time.Second)
		th.answered(time.Now()) // 4 s after the last: not quiet yet (5 s)
		time.Sleep(time.Second)
		th.answered(time.Now()) // 5 s after: over
		th.answered(time.Now())
		th.throttled(time.Now(), "GET /api", time.Second) // a new episode
		want := []struct {
			at  time.Duration
			msg string
		}{
			{0, "WARN The API server https://api:6443 throttles the operator's requests (429 Too Many Requests): PATCH /apis/x; retrying after 1 seconds as told (Retry-After)."},
			{1500, "WARN The API server https://api:6443 still throttles the operator's requests after 1.5 seconds (4 requests throttled): GET /api; retrying after 2 seconds as told (Retry-After)."},
			{7500, "INFO The API server https://api:6443 no longer throttles the operator's requests: 5 requests throttled over 2.5 seconds."},
			{7500, "WARN The API server https://api:6443 throttles the operator's requests (429 Too Many Requests): GET /api; retrying after 1 seconds as told (Retry-After)."},
		}
		got := rec.all()
		if len(got) != len(want) {
			t.Fatalf("%d records, want %d: %v", len(got), len(want), got)
		}
		for i, w := range want {
			if at := got[i].at.Sub(start); at != w.at*time.Millisecond || got[i].msg != w.msg {
				t.Errorf("record %d: %s at %s, want %s at %s", i, got[i].msg, at, w.msg, w.at*time.Millisecond)
			}
		}
	})
}

// The transport reports the server's 429s with their Retry-After.
func TestThrottlingWrap(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "3")
			http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	rec := &records{}
	client := &http.Client{Transport: NewThrottling(srv.URL, slog.New(rec), time.Minute).Wrap(http.DefaultTransport)}
	for range 2 {
		resp, err := client.Get(srv.URL + "/apis/kopf.dev/v1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := rec.all()
	if len(got) != 1 || !strings.HasSuffix(got[0].msg, "throttles the operator's requests (429 Too Many Requests): GET /apis/kopf.dev/v1; retrying after 3 seconds as told (Retry-After).") {
		t.Errorf("logged %v", got)
	}
}
