package reactor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

func TestRetryDelay(t *testing.T) {
	delays := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}
	gr := schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"}
	tests := []struct {
		name    string
		delays  []time.Duration
		jitter  float64
		attempt int
		err     error
		// backoff and delay must be within [min, max]: equal bounds for
		// exact values.
		backoffMin, backoffMax time.Duration
		delayMin, delayMax     time.Duration
		notOK                  bool
	}{
		{name: "first attempt, exact", delays: delays, attempt: 0, err: errors.New("boom"),
			backoffMin: time.Second, backoffMax: time.Second, delayMin: time.Second, delayMax: time.Second},
		{name: "second attempt, exact", delays: delays, attempt: 1, err: errors.New("boom"),
			backoffMin: 2 * time.Second, backoffMax: 2 * time.Second, delayMin: 2 * time.Second, delayMax: 2 * time.Second},
		{name: "past the end: the last one repeated", delays: delays, attempt: 9, err: errors.New("boom"),
			backoffMin: 5 * time.Second, backoffMax: 5 * time.Second, delayMin: 5 * time.Second, delayMax: 5 * time.Second},
		{name: "negative jitter is none", delays: delays, jitter: -1, attempt: 0, err: errors.New("boom"),
			backoffMin: time.Second, backoffMax: time.Second, delayMin: time.Second, delayMax: time.Second},
		{name: "jittered within [d, 1.5d]", delays: delays, jitter: 0.5, attempt: 1, err: errors.New("boom"),
			backoffMin: 2 * time.Second, backoffMax: 3 * time.Second, delayMin: 2 * time.Second, delayMax: 3 * time.Second},
		{name: "jittered within [d, 2d]", delays: delays, jitter: 1, attempt: 2, err: errors.New("boom"),
			backoffMin: 5 * time.Second, backoffMax: 10 * time.Second, delayMin: 5 * time.Second, delayMax: 10 * time.Second},
		{name: "Retry-After longer than the backoff wins", delays: delays, jitter: 0.5, attempt: 0,
			err:        apierrors.NewTooManyRequests("slow down", 30),
			backoffMin: time.Second, backoffMax: 1500 * time.Millisecond, delayMin: 30 * time.Second, delayMax: 30 * time.Second},
		{name: "Retry-After of a wrapped error", delays: delays, attempt: 0,
			err:        fmt.Errorf("patching default/x: %w", apierrors.NewTooManyRequests("slow down", 7)),
			backoffMin: time.Second, backoffMax: time.Second, delayMin: 7 * time.Second, delayMax: 7 * time.Second},
		{name: "Retry-After shorter than the backoff is a minimum only", delays: delays, attempt: 2,
			err:        apierrors.NewTooManyRequests("slow down", 1),
			backoffMin: 5 * time.Second, backoffMax: 5 * time.Second, delayMin: 5 * time.Second, delayMax: 5 * time.Second},
		{name: "server timeout's retryAfterSeconds", delays: delays, attempt: 0,
			err:        apierrors.NewServerTimeout(gr, "patch", 4),
			backoffMin: time.Second, backoffMax: time.Second, delayMin: 4 * time.Second, delayMax: 4 * time.Second},
		{name: "an API error with no delay asked", delays: delays, attempt: 0,
			err:        apierrors.NewInternalError(errors.New("etcd is down")),
			backoffMin: time.Second, backoffMax: time.Second, delayMin: time.Second, delayMax: time.Second},
		{name: "no delays: not retried", delays: nil, jitter: 0.5, attempt: 0, err: errors.New("boom"), notOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := settings.Queueing{ErrorDelays: tt.delays, ErrorJitter: tt.jitter}
			seen := map[time.Duration]bool{}
			const samples = 200
			for range samples {
				delay, backoff, ok := retryDelay(q, tt.attempt, tt.err)
				if ok == tt.notOK {
					t.Fatalf("retryDelay() ok = %v, want %v", ok, !tt.notOK)
				}
				if !ok {
					return
				}
				if backoff < tt.backoffMin || backoff > tt.backoffMax {
					t.Fatalf("backoff = %s, want within [%s, %s]", backoff, tt.backoffMin, tt.backoffMax)
				}
				if delay < tt.delayMin || delay > tt.delayMax {
					t.Fatalf("delay = %s, want within [%s, %s]", delay, tt.delayMin, tt.delayMax)
				}
				seen[backoff] = true
			}
			// Jitter is what keeps objects failing together from retrying
			// together: 200 samples over a range of a second or more, in
			// milliseconds, must not all be the same.
			if jittered := tt.backoffMax > tt.backoffMin; jittered && len(seen) < samples/4 {
				t.Errorf("%d distinct backoffs in %d samples: the jitter is not random enough", len(seen), samples)
			}
		})
	}
}

// TestDefaultErrorDelaysAreJittered: the default settings retry the first
// failure after 1 to 1.5 s, differently for different objects.
func TestDefaultErrorDelaysAreJittered(t *testing.T) {
	q := settings.Default().Queueing
	seen := map[time.Duration]bool{}
	for range 50 {
		delay, _, ok := retryDelay(q, 0, errors.New("boom"))
		if !ok || delay < time.Second || delay > 1500*time.Millisecond {
			t.Fatalf("retryDelay() = %s, %v; want within [1s, 1.5s]", delay, ok)
		}
		seen[delay] = true
	}
	if len(seen) < 10 {
		t.Errorf("only %d distinct delays in 50 first retries", len(seen))
	}
}

func TestIsInapplicable(t *testing.T) {
	gk := schema.GroupKind{Group: "kopf.dev", Kind: "KopfExample"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "a failed test operation (as kube-apiserver reports it)", err: testFailed("/metadata/resourceVersion"), want: true},
		{name: "wrapped", err: fmt.Errorf("patching: %w", testFailed("/metadata/finalizers/0")), want: true},
		{name: "an invalid object", err: apierrors.NewInvalid(gk, "x", field.ErrorList{field.Invalid(field.NewPath("metadata", "finalizers").Index(0), "a b", "a qualified name")}), want: false},
		{name: "an invalid object with no causes", err: apierrors.NewInvalid(gk, "x", nil), want: false},
		{name: "a conflict", err: apierrors.NewConflict(schema.GroupResource{}, "x", errors.New("changed")), want: false},
		{name: "not an API error", err: errors.New("testing value x failed"), want: false},
		{name: "another 422 the server gave no detail for", err: apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", schema.GroupResource{Resource: "kopfexamples"}, "x", "", 0, true), want: false},
		{name: "nil", err: nil, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isInapplicable(tt.err); got != tt.want {
				t.Errorf("isInapplicable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// testFailed is kube-apiserver's answer to a JSON patch whose test
// operation on path fails (apiserver's endpoints/handlers/patch.go).
func testFailed(path string) error {
	return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "",
		fmt.Sprintf("testing value %s failed: test failed", path), 0, false)
}

// TestJSONPatchErrors: every outcome of a finalizer patch is either
// returned or logged, never dropped silently.
func TestJSONPatchErrors(t *testing.T) {
	gk := schema.GroupKind{Group: "kopf.dev", Kind: "KopfExample"}
	gr := schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"}
	invalid := apierrors.NewInvalid(gk, "x", field.ErrorList{field.Invalid(field.NewPath("metadata", "finalizers").Index(0), "a b", "a qualified name")})
	tests := []struct {
		name    string
		err     error
		wantErr func(error) bool // nil: no error
		wantLog string           // "": nothing logged
	}{
		{name: "success", err: nil},
		{name: "gone", err: apierrors.NewNotFound(gr, "x"),
			wantLog: "level=DEBUG msg=\"Patching was skipped: the object does not exist anymore.\""},
		{name: "conflict", err: apierrors.NewConflict(gr, "x", errors.New("changed")),
			wantLog: "level=DEBUG msg=\"Could not apply the patch in full due to conflicts with newer changes. Will try on the next cycle soon."},
		{name: "resourceVersion test failed", err: testFailed("/metadata/resourceVersion"),
			wantLog: "level=DEBUG msg=\"Could not apply the patch in full due to conflicts with newer changes. Will try on the next cycle soon."},
		{name: "invalid", err: invalid, wantErr: func(err error) bool {
			var target *invalidPatchError
			return errors.As(err, &target) && apierrors.IsInvalid(err)
		}},
		{name: "server error", err: apierrors.NewInternalError(errors.New("etcd")), wantErr: apierrors.IsInternalError,
			wantLog: "level=ERROR msg=\"Request attempt #1/1 failed; escalating: PATCH /apis/kopf.dev/v1/namespaces/default/kopfexamples/x -> Internal error occurred: etcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, logs, patches := fakeReactor(t, tt.err)
			r.Settings.Networking.ErrorBackoffs = nil // TestRetryRequest covers the request's retries
			_, err := r.jsonPatch(context.Background(), object(), []map[string]any{{"op": "remove", "path": "/metadata/finalizers/0"}})
			if patches.Load() != 1 {
				t.Fatalf("%d patches sent, want 1", patches.Load())
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("jsonPatch() error = %v, want none", err)
			case tt.wantErr != nil && (err == nil || !tt.wantErr(err)):
				t.Errorf("jsonPatch() error = %v (%T), not the one wanted", err, err)
			}
			got := logs.String()
			if tt.wantLog == "" && got != "" {
				t.Errorf("logged %q, want nothing", got)
			}
			if tt.wantLog != "" && !strings.Contains(got, tt.wantLog) {
				t.Errorf("logged %q, want %q", got, tt.wantLog)
			}
		})
	}
}

// TestNothingIsSentOnceTheContextIsDone: once the workers' context is
// cancelled (the operator's exit timeout is over), a handler's outcome is
// not stored, however it ends: no patch of either kind reaches the API.
func TestNothingIsSentOnceTheContextIsDone(t *testing.T) {
	r, _, patches := fakeReactor(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rv, err := r.apply(ctx, object(), map[string]any{"status": map[string]any{"create_fn": map[string]any{"message": "late"}}})
	if !errors.Is(err, context.Canceled) || rv != "" {
		t.Errorf("apply() = %q, %v; want no version and context.Canceled", rv, err)
	}
	rv, err = r.jsonPatch(ctx, object(), []map[string]any{{"op": "remove", "path": "/metadata/finalizers/0"}})
	if !errors.Is(err, context.Canceled) || rv != "" {
		t.Errorf("jsonPatch() = %q, %v; want no version and context.Canceled", rv, err)
	}
	if n := patches.Load(); n != 0 {
		t.Errorf("%d patches sent with the context done, want 0", n)
	}
}

// fakeReactor is a reactor of kopfexamples whose every patch is answered
// with err (a success if nil); it counts the patches and logs to a buffer.
func fakeReactor(t *testing.T, err error) (*Reactor, *bytes.Buffer, *atomic.Int32) {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "KopfExampleList"})
	var patches atomic.Int32
	client.PrependReactor("patch", "kopfexamples", func(action clienttesting.Action) (bool, runtime.Object, error) {
		patches.Add(1)
		if err != nil {
			return true, nil, err
		}
		patched := &unstructured.Unstructured{Object: object()}
		patched.SetResourceVersion("2")
		return true, patched, nil
	})
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	r := &Reactor{
		Resource: resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true},
		Client:   client.Resource(gvr),
		Settings: settings.Default(),
		Logger:   logger,
	}
	return r, &logs, &patches
}

func object() body.Body {
	return body.Body{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "x", "namespace": "default", "resourceVersion": "1", "finalizers": []any{"kopf.zalando.org/KopfFinalizerMarker"}},
	}
}

// TestRetryRequest: which failures are sent again, how often, after which
// delays, and what is logged.
func TestRetryRequest(t *testing.T) {
	gr := schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"}
	refused := fmt.Errorf("dial tcp 127.0.0.1:1: %w", errors.New("connect: connection refused"))
	tooMany := apierrors.NewTooManyRequests("slow down", 7)
	tests := []struct {
		name     string
		failures []error // the answers of the attempts before the first success
		backoffs []time.Duration
		wantErr  bool
		sends    int
		elapsed  time.Duration
		logs     []string
	}{
		{name: "success", sends: 1},
		{name: "no answer, then success", failures: []error{refused}, sends: 2, elapsed: time.Second,
			logs: []string{"ERROR Request attempt #1/3 failed; will retry: PATCH /x -> dial tcp 127.0.0.1:1: connect: connection refused",
				"DEBUG Request attempt #2/3: PATCH /x", "DEBUG Request attempt #2/3 succeeded: PATCH /x"}},
		{name: "5xx until escalated", failures: []error{apierrors.NewInternalError(errors.New("a")), apierrors.NewServiceUnavailable("b"), apierrors.NewServiceUnavailable("c")},
			wantErr: true, sends: 3, elapsed: 3 * time.Second,
			logs: []string{"ERROR Request attempt #3/3 failed; escalating: PATCH /x -> c"}},
		{name: "403 is retried, as Kopf", failures: []error{apierrors.NewForbidden(gr, "x", errors.New("upgrading"))}, sends: 2, elapsed: time.Second},
		{name: "429 waits for Retry-After", failures: []error{tooMany}, sends: 2, elapsed: 7 * time.Second,
			logs: []string{"DEBUG Overriding the backoff 1s with the retry-after 7s from the server: PATCH /x"}},
		{name: "404 is not retried", failures: []error{apierrors.NewNotFound(gr, "x")}, wantErr: true, sends: 1},
		{name: "409 is not retried", failures: []error{apierrors.NewConflict(gr, "x", errors.New("c"))}, wantErr: true, sends: 1},
		{name: "422 is not retried", failures: []error{apierrors.NewInvalid(schema.GroupKind{Group: "kopf.dev", Kind: "KopfExample"}, "x", field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, "bad")})}, wantErr: true, sends: 1},
		{name: "no backoffs: one attempt", failures: []error{refused}, backoffs: []time.Duration{}, wantErr: true, sends: 1,
			logs: []string{"ERROR Request attempt #1/1 failed; escalating: PATCH /x -> "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := settings.Default()
				s.Queueing.ErrorJitter = 0
				s.Networking.ErrorBackoffs = []time.Duration{time.Second, 2 * time.Second}
				if tt.backoffs != nil {
					s.Networking.ErrorBackoffs = tt.backoffs
				}
				var out bytes.Buffer
				logger := slog.New(lineHandler{&out})
				sends := 0
				start := time.Now()
				_, err := retryRequest(t.Context(), s, logger, func() string { return "PATCH /x" }, func(context.Context) (string, error) {
					sends++
					if sends <= len(tt.failures) {
						return "", tt.failures[sends-1]
					}
					return "rv", nil
				})
				if (err != nil) != tt.wantErr {
					t.Errorf("err = %v, want an error: %v", err, tt.wantErr)
				}
				if sends != tt.sends {
					t.Errorf("sent %d times, want %d", sends, tt.sends)
				}
				if got := time.Since(start); got != tt.elapsed {
					t.Errorf("took %s, want %s", got, tt.elapsed)
				}
				for _, want := range tt.logs {
					if !strings.Contains(out.String(), want) {
						t.Errorf("the log lacks %q:\n%s", want, out.String())
					}
				}
			})
		})
	}
}

// TestRetryRequestStopsWithTheContext: an operator that exits does not
// wait for the next attempt.
func TestRetryRequestStopsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		s := settings.Default()
		sends := 0
		time.AfterFunc(500*time.Millisecond, cancel)
		start := time.Now()
		_, err := retryRequest(ctx, s, slog.New(slog.DiscardHandler), func() string { return "PATCH /x" }, func(context.Context) (string, error) {
			sends++
			return "", errors.New("connection refused")
		})
		if err == nil || sends != 1 || time.Since(start) != 500*time.Millisecond {
			t.Errorf("err %v after %d sends in %s; want an error after 1 send in 0.5s", err, sends, time.Since(start))
		}
	})
}

// lineHandler writes records as "LEVEL message" lines.
type lineHandler struct{ w *bytes.Buffer }

func (h lineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h lineHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h lineHandler) WithGroup(string) slog.Handler            { return h }
func (h lineHandler) Handle(_ context.Context, r slog.Record) error {
	fmt.Fprintf(h.w, "%s %s\n", r.Level, r.Message)
	return nil
}
