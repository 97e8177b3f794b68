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
// Credentials with an expiration (Kopf's ConnectionInfo.expiration) are
// loaded again before the first request at or after it, as Kopf's vault
// does (no earlier): that request, and every other meanwhile, waits for
// the new ones, so no request carries credentials past their expiration;
// if they cannot be loaded, or have expired too, the requests fail with
// that error until a later attempt succeeds.
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
//
// The login runs with the context of the request that needed it. A
// request that the login itself sends through this transport (a login
// handler using the operator's client, e.g. for a TokenRequest) goes out
// as it is, with the credentials in use, and its 401 is its own answer:
// it neither waits for the re-login in progress, which waits for it, nor
// starts another.
type Relogin struct {
	login  func(context.Context) (Credentials, error)
	logger *slog.Logger

	mu      sync.Mutex
	auth    string        // the Authorization header to send; "" keeps the request's
	expires time.Time     // when the credentials in use expire; zero: never
	failed  error         // why the last re-login of expired credentials failed
	last    time.Time     // the last attempt
	wait    time.Duration // after a failed attempt: until the next one
	clock   func() time.Time
}

// Credentials are what a login gives: a configuration, and when its
// credentials expire (zero: never; Kopf's ConnectionInfo.expiration).
type Credentials struct {
	Config     *rest.Config
	Expiration time.Time
}

// NewRelogin returns the Relogin of credentials that do not expire,
// loaded again by login.
func NewRelogin(login func(context.Context) (*rest.Config, error), logger *slog.Logger) *Relogin {
	return NewExpiringRelogin(func(ctx context.Context) (Credentials, error) {
		cfg, err := login(ctx)
		return Credentials{Config: cfg}, err
	}, time.Time{}, logger)
}

// NewExpiringRelogin returns the Relogin of credentials loaded again by
// login, those in use now expiring at expiration (zero: never).
func NewExpiringRelogin(login func(context.Context) (Credentials, error), expiration time.Time, logger *slog.Logger) *Relogin {
	return &Relogin{login: login, logger: logger, expires: expiration, clock: time.Now}
}

func (l *Relogin) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Context().Value(reloggingIn{l}) != nil {
			return rt.RoundTrip(req) // sent by the login in progress
		}
		auth, err := l.current(req.Context())
		if err != nil {
			return nil, err
		}
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

// current returns the Authorization header to send ("": the request's),
// after loading the credentials again if those in use have expired.
func (l *Relogin) current(ctx context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	if l.expires.IsZero() || now.Before(l.expires) {
		return l.auth, nil
	}
	if !l.last.IsZero() && now.Sub(l.last) < max(l.wait, minReloginInterval) && l.failed != nil {
		return "", l.failed
	}
	expired := l.expires
	auth, err := l.relogin(ctx, "")
	if err != nil {
		l.failed = fmt.Errorf("the credentials expired at %s and cannot be renewed: %w", expired.Format(time.RFC3339), err)
		return "", l.failed
	}
	return auth, nil
}

// refresh returns the Authorization header to retry with, if it differs
// from the refused one.
func (l *Relogin) refresh(ctx context.Context, refused string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.auth != "" && l.auth != refused {
		return l.auth, true // renewed since the request was sent
	}
	if !l.last.IsZero() && l.clock().Sub(l.last) < max(l.wait, minReloginInterval) {
		return "", false
	}
	auth, err := l.relogin(ctx, refused)
	return auth, err == nil
}

// relogin loads the credentials again, with Kopf's log lines, and makes
// them the ones in use; refused, if not "", is the Authorization header
// that the API server refused. l.mu is held.
func (l *Relogin) relogin(ctx context.Context, refused string) (string, error) {
	now := l.clock()
	l.last = now
	l.logger.Info("Re-authentication has been initiated.")
	auth, expires, err := l.load(ctx)
	switch {
	case err != nil:
	case refused != "" && auth == refused:
		err = errors.New("the credentials at their source are the ones refused (401 Unauthorized)")
	case !expires.IsZero() && !now.Before(expires):
		err = fmt.Errorf("the credentials at their source have expired too (at %s)", expires.Format(time.RFC3339))
	}
	if err != nil {
		l.wait = min(max(2*l.wait, minReloginInterval), maxReloginInterval)
		l.logger.Warn(fmt.Sprintf("Re-authentication has failed: %v.", err))
		return "", err
	}
	l.auth, l.expires, l.wait, l.failed = auth, expires, 0, nil
	l.logger.Info("Re-authentication has finished.")
	return auth, nil
}

// load reads the credentials and returns their Authorization header and
// expiration.
func (l *Relogin) load(ctx context.Context) (string, time.Time, error) {
	creds, err := l.login(context.WithValue(ctx, reloggingIn{l}, true))
	auth, err := authorization(creds.Config, err)
	return auth, creds.Expiration, err
}

// reloggingIn marks the context of a login in progress of its Relogin.
type reloggingIn struct{ l *Relogin }

// authorization is the Authorization header of the credentials of cfg.
func authorization(cfg *rest.Config, err error) (string, error) {
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
