// Command daemons is the Go port of Kopf's 14-daemons example: two daemons
// that run in the background for every KopfExample, each failing its first
// three attempts and being retried after a second.
//
// Kopf tells sync daemons (threads, which must check their stopped flag)
// from async ones (coroutines, which are cancelled). In Go every daemon is
// a goroutine and can do both: kw.Stopped is done when the daemon must
// stop (with context.Cause saying why), and ctx is cancelled then or, with
// cancellation_backoff=, that much later. BackgroundSync watches
// kw.Stopped, as Kopf's sync daemon does; BackgroundAsync watches only its
// ctx, as Kopf's async daemon relies on its cancellation.
//
// Run it against a cluster with the KopfExample CRD (../crd.yaml):
//
//	go run . run -A --standalone --verbose
package main

//go:generate go tool kopf-gen

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/pyfmt"
)

// BackgroundSync checks kw.Stopped, as Kopf's sync daemons must. It exits
// after 3 attempts and then 30 seconds of running (unless stopped).
//
//kopf:daemon kopfexamples backoff=3
func BackgroundSync(ctx context.Context, kw BackgroundSyncKwargs) error {
	if kw.Retry < 3 {
		kw.Patch.Status()["message"] = fmt.Sprintf("Failed %d times.", kw.Retry+1)
		return kopf.NewTemporaryError("Simulated failure.", time.Second)
	}

	started := time.Now()
	for kw.Stopped.Err() == nil && time.Since(started) <= 30*time.Second {
		kw.Logger.Info(fmt.Sprintf("=> Ping from a sync daemon: field=%s, retry=%d", pyfmt.Repr(kw.Spec["field"]), kw.Retry))
		select {
		case <-kw.Stopped.Done():
		case <-time.After(5 * time.Second):
		}
	}

	kw.Patch.Status()["message"] = "Accompanying is finished."
	return nil
}

// BackgroundAsync runs forever (until stopped, i.e. its ctx is cancelled),
// yet fails to start for the first 3 times. It ignores kw.Stopped, as
// Kopf's async daemon does: cancellation_backoff=1.0 gives it a second to
// exit on its own before its ctx is cancelled, and cancellation_timeout=0.5
// half a second more before the operator gives up on it.
//
//kopf:daemon kopfexamples backoff=3 cancellation_backoff=1.0 cancellation_timeout=0.5 annotations={someannotation: somevalue}
func BackgroundAsync(ctx context.Context, kw BackgroundAsyncKwargs) error {
	if kw.Retry < 3 {
		return kopf.NewTemporaryError("Simulated failure.", time.Second)
	}

	for {
		kw.Logger.Info(fmt.Sprintf("=> Ping from an async daemon: field=%s", pyfmt.Repr(kw.Spec["field"])))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
}

func main() {
	os.Exit(kopf.Main(Register))
}
