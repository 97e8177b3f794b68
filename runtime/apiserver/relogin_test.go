package apiserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/logging"
)

// expiringLogins is a login whose every call gives the next of its
// results.
type expiringLogins struct {
	mu      sync.Mutex
	results []func() (Credentials, error)
	calls   int
}

func (l *expiringLogins) login(context.Context) (Credentials, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	return l.results[min(l.calls, len(l.results))-1]()
}

func token(tok string, expires time.Time) func() (Credentials, error) {
	return func() (Credentials, error) {
		return Credentials{Config: &rest.Config{BearerToken: tok}, Expiration: expires}, nil
	}
}

// Expiring credentials are loaded again by the first request at their
// expiration (not before, as Kopf), which waits for them; a failed login
// fails the requests until the next attempt, 1 s later.
func TestReloginAtExpiration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		logins := &expiringLogins{results: []func() (Credentials, error){
			token("second", start.Add(2*time.Minute)),
			func() (Credentials, error) { return Credentials{}, errors.New("the vault is sealed") },
			token("stale", start.Add(time.Minute)),
			token("third", time.Time{}),
		}}
		var logs testutil.Buffer
		relogin := NewExpiringRelogin(logins.login, start.Add(time.Minute), logging.New(&logs, logging.Plain, slog.LevelInfo))
		var sent []string
		client := &http.Client{Transport: relogin.Wrap(roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			sent = append(sent, req.Header.Get("Authorization"))
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
		}))}
		get := func() error {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://apiserver/version", nil)
			req.Header.Set("Authorization", "Bearer first") // client-go's, of the initial credentials
			resp, err := client.Do(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			return err
		}
		steps := []struct {
			after      time.Duration // since the previous step
			wantSent   string        // "" for an error
			wantErr    string
			wantLogins int
		}{
			{0, "Bearer first", "", 0},
			{time.Minute - time.Nanosecond, "Bearer first", "", 0},                                             // not expired yet
			{time.Nanosecond, "Bearer second", "", 1},                                                          // at the expiration
			{time.Minute, "", "expired at " + start.Add(2*time.Minute).Format(time.RFC3339), 2},                // the login fails
			{500 * time.Millisecond, "", "cannot be renewed: loading the credentials: the vault is sealed", 2}, // no new attempt yet
			{500 * time.Millisecond, "", "the credentials at their source have expired too", 3},                // expired already
			{2 * time.Second, "Bearer third", "", 4},                                                           // the backoff doubled; never expire
			{time.Hour, "Bearer third", "", 4},
		}
		for i, step := range steps {
			time.Sleep(step.after)
			sent = nil
			err := get()
			switch {
			case step.wantErr == "" && (err != nil || len(sent) != 1 || sent[0] != step.wantSent):
				t.Errorf("step %d: sent %q, %v; want %q", i, sent, err, step.wantSent)
			case step.wantErr != "" && (err == nil || !strings.Contains(err.Error(), step.wantErr) || len(sent) != 0):
				t.Errorf("step %d: sent %q, %v; want no request and %q", i, sent, err, step.wantErr)
			}
			if logins.calls != step.wantLogins {
				t.Errorf("step %d: %d logins, want %d", i, logins.calls, step.wantLogins)
			}
		}
		want := "Re-authentication has been initiated.\nRe-authentication has finished.\n" +
			"Re-authentication has been initiated.\nRe-authentication has failed: loading the credentials: the vault is sealed.\n" +
			"Re-authentication has been initiated.\nRe-authentication has failed: the credentials at their source have expired too (at " + start.Add(time.Minute).Format(time.RFC3339) + ").\n" +
			"Re-authentication has been initiated.\nRe-authentication has finished.\n"
		if logs.String() != want {
			t.Errorf("the log:\n%s\nwant:\n%s", logs.String(), want)
		}
	})
}

// Concurrent requests at the expiration wait for one login.
func TestReloginAtExpirationOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logins := &expiringLogins{results: []func() (Credentials, error){token("second", time.Time{})}}
		relogin := NewExpiringRelogin(logins.login, time.Now().Add(time.Minute), slog.New(slog.DiscardHandler))
		var mu sync.Mutex
		var sent []string
		rt := relogin.Wrap(roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, req.Header.Get("Authorization"))
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
		}))
		time.Sleep(time.Minute)
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://apiserver/api", nil)
				req.Header.Set("Authorization", "Bearer first")
				if _, err := rt.RoundTrip(req); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if logins.calls != 1 || strings.Join(sent, ",") != strings.Repeat("Bearer second,", 4)+"Bearer second" {
			t.Errorf("%d logins, sent %q; want 1 login and the new token on every request", logins.calls, sent)
		}
	})
}

// A login that sends a request through the operator's own transport (a
// login handler using the operator's client) does not wait for itself:
// at the expiration, and on a 401, its request goes out with the
// credentials in use and gets its own answer. (Without synctest: a
// deadlock on a mutex would hang its bubble; here the test fails.)
func TestReloginByTheOperatorsClient(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusUnauthorized} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var rt http.RoundTripper
			var inner []string
			login := func(ctx context.Context) (Credentials, error) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://apiserver/api/v1/tokenrequests", nil)
				req.Header.Set("Authorization", "Bearer first")
				resp, err := rt.RoundTrip(req)
				if err != nil {
					return Credentials{}, err
				}
				inner = append(inner, resp.Status)
				return Credentials{Config: &rest.Config{BearerToken: "second"}}, nil
			}
			relogin := NewExpiringRelogin(login, time.Now().Add(-time.Second), slog.New(slog.DiscardHandler))
			rt = relogin.Wrap(roundTripperFunc(func(req *http.Request) (*http.Response, error) {
				code := http.StatusOK
				if req.URL.Path == "/api/v1/tokenrequests" || req.Header.Get("Authorization") == "Bearer first" {
					code = status
				}
				return &http.Response{StatusCode: code, Status: http.StatusText(code), Body: http.NoBody, Request: req}, nil
			}))
			done := make(chan *http.Response, 1)
			go func() {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://apiserver/api", nil)
				req.Header.Set("Authorization", "Bearer first")
				resp, _ := rt.RoundTrip(req)
				done <- resp
			}()
			select {
			case resp := <-done:
				if resp == nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("the request at the expiration got %v; want 200 with the new credentials", resp)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the request at the expiration still waits for the login, which waits for its own request")
			}
			if len(inner) != 1 || inner[0] != http.StatusText(status) {
				t.Errorf("the login's own request got %q, want one %q", inner, http.StatusText(status))
			}
		})
	}
}
