package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// While the credentials stay refused, every request gets a 401, and
// reading their source for each would add nothing: they are loaded again
// at most once per second, and after each failed attempt the interval
// doubles up to maxReloginInterval.
const (
	minReloginInterval = time.Second
	maxReloginInterval = 10 * time.Second
)

// Relogin is a rest.Config WrapTransport that answers a 401 Unauthorized
// by loading the credentials again (Login) and, if their bearer token has
// changed, sending the request once more with it; every later request
// then carries the new token. It sits inside client-go's authentication
// wrappers, so it replaces the Authorization header that they set.
//
// It logs Kopf's words: "Re-authentication has been initiated." and
// "Re-authentication has finished." at INFO, or "Re-authentication has
// failed: <why>." at WARNING (the source cannot be read, its credentials
// are unchanged, or they are not a bearer token: client certificates are
// loaded only when the operator starts).
//
// Only one re-login runs at a time, with backoff between failed ones (see
// minReloginInterval); requests refused meanwhile get the latest token if
// it changed since they were sent, else their 401.
type Relogin struct {
	login  func(context.Context) (*rest.Config, error)
	logger *slog.Logger

	mu    sync.Mutex
	auth  string        // the Authorization header to send; "" keeps the request's
	last  time.Time     // the last attempt
	wait  time.Duration // after a failed attempt: until the next one
	clock func() time.Time
}

func NewRelogin(login func(context.Context) (*rest.Config, error), logger *slog.Logger) *Relogin {
	return &Relogin{login: login, logger: logger, clock: time.Now}
}

func (l *Relogin) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		auth := l.auth
		l.mu.Unlock()
		if auth != "" {
			req = req.Clone(req.Context())
			req.Header.Set("Authorization", auth)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			return resp, err
		}
		replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		newAuth, ok := l.refresh(req.Context(), req.Header.Get("Authorization"))
		if !ok || !replayable {
			return resp, nil
		}
		retry := req.Clone(req.Context())
		retry.Header.Set("Authorization", newAuth)
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return resp, nil
			}
			retry.Body = body
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		return rt.RoundTrip(retry)
	})
}

// refresh returns the Authorization header to retry with, if it differs
// from the refused one.
func (l *Relogin) refresh(ctx context.Context, refused string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.auth != "" && l.auth != refused {
		return l.auth, true // renewed since the request was sent
	}
	now := l.clock()
	if !l.last.IsZero() && now.Sub(l.last) < max(l.wait, minReloginInterval) {
		return "", false
	}
	l.last = now
	l.logger.Info("Re-authentication has been initiated.")
	auth, err := l.load(ctx)
	if err == nil && auth == refused {
		err = errors.New("the credentials at their source are the ones refused (401 Unauthorized)")
	}
	if err != nil {
		l.wait = min(max(2*l.wait, minReloginInterval), maxReloginInterval)
		l.logger.Warn(fmt.Sprintf("Re-authentication has failed: %v.", err))
		return "", false
	}
	l.auth, l.wait = auth, 0
	l.logger.Info("Re-authentication has finished.")
	return auth, true
}

// load reads the credentials and returns their Authorization header.
func (l *Relogin) load(ctx context.Context) (string, error) {
	cfg, err := l.login(ctx)
	if err != nil {
		return "", fmt.Errorf("loading the credentials: %w", err)
	}
	if cfg == nil {
		return "", errors.New("no credentials were loaded")
	}
	token := cfg.BearerToken
	if token == "" && cfg.BearerTokenFile != "" {
		data, err := os.ReadFile(cfg.BearerTokenFile)
		if err != nil {
			return "", fmt.Errorf("reading the token: %w", err)
		}
		token = strings.TrimSpace(string(data))
	}
	if token == "" {
		return "", errors.New("the credentials have no bearer token; other credentials (client certificates, exec plugins) are loaded only when the operator starts: restart it")
	}
	return "Bearer " + token, nil
}
