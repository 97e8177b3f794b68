package kopf_test

// The activities of docs/activities.md that examples/13-hooks does not
// show, compiled here.

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
)

// ConfigureFn changes the settings before the operator reads them, as a
// Kopf operator does in its startup handler.
//
//kopf:on.startup
func ConfigureFn(ctx context.Context, kw ConfigureFnKwargs) error {
	kw.Settings.Posting.Level = slog.LevelWarn
	kw.Settings.Execution.DefaultBackoff = 10 * time.Second
	kw.Memo["started"] = time.Now() // every object's memo gets it
	return nil
}

// LoginFromFiles logs in with a token and a CA mounted by the platform, and
// falls back to the usual credentials (--kubeconfig, $KUBECONFIG,
// in-cluster) where they are absent. On a 401, the operator calls it again
// and uses the new token.
//
//kopf:on.login
func LoginFromFiles(ctx context.Context, kw LoginFromFilesKwargs) (*kopf.ConnectionInfo, error) {
	token, err := os.ReadFile("/etc/operator/token")
	if errors.Is(err, fs.ErrNotExist) {
		return kopf.LoginViaClient(ctx, kw)
	}
	if err != nil {
		return nil, err
	}
	return &kopf.ConnectionInfo{
		Config: &rest.Config{
			Host:            "https://k8s.example.com:6443",
			BearerToken:     strings.TrimSpace(string(token)),
			TLSClientConfig: rest.TLSClientConfig{CAFile: "/etc/operator/ca.crt"},
		},
		Priority: 10,
	}, nil
}

// LoginWithExpiringToken logs in with a token that a platform issues for
// an hour; the operator calls it again at the expiration.
//
//kopf:on.login
func LoginWithExpiringToken(ctx context.Context, kw LoginWithExpiringTokenKwargs) (*kopf.ConnectionInfo, error) {
	token, expires, err := issueToken(ctx, time.Hour)
	if err != nil {
		return nil, err
	}
	return &kopf.ConnectionInfo{
		Config:     &rest.Config{Host: "https://k8s.example.com:6443", BearerToken: token},
		Expiration: expires,
	}, nil
}

// issueToken stands for a platform's token service.
func issueToken(_ context.Context, validity time.Duration) (string, time.Time, error) {
	return "token", time.Now().Add(validity), nil
}

// An operator with a memo of its own: the activities get it, and each
// object's handlers a shallow copy of it.
func ExampleWithMemo() {
	memo := kopf.Memo{"greeting": "hello"}
	os.Exit(kopf.Main(register, kopf.WithMemo(memo)))
}

// What kopf-gen generates beside the handlers above.
type (
	ConfigureFnKwargs    = kopf.ActivityKwargs
	LoginFromFilesKwargs = kopf.ActivityKwargs

	LoginWithExpiringTokenKwargs = kopf.ActivityKwargs
)
