// Command operator is the operator of the chaos campaign (e2e/cmd/chaos),
// run as a separate process that the campaign SIGKILLs and restarts. For
// every KopfExample (status subresource) and KopfPlain (no subresource)
// object it has three creation handlers, run in this order:
//
//   - fast_fn returns at once;
//   - slow_fn sleeps 0.5-2 s (chosen from the object's name, so a re-run
//     sleeps as long), returning early with the context's error when the
//     operator stops;
//   - retry_fn fails with a temporary error (retried after 1 s) on its
//     first attempt (retry=0) and succeeds on the next.
//
// Each returns {"message": ...}, stored by the operator in status.<id>.
//
// Every run of a handler is appended to the ledger file $CHAOS_LEDGER, one
// line per event, each written with a single write(2) to a file opened
// with O_APPEND, so that lines of concurrent handlers never interleave and
// every line written survives a SIGKILL of the process (chaos.ParseLedger
// reads them):
//
//	<RFC 3339 time> pid=<pid> <resource>/<namespace>/<name> <handler> <event> retry=<n> rv=<resourceVersion>
//
// where the event is "start" when the handler is entered, then one of
// "succeeded" (written before the handler returns its result: a handler
// whose line cannot be written fails instead), "failed" (the temporary
// error) or "cancelled" (the context ended its sleep).
//
// $CHAOS_INACTIVITY_TIMEOUT, if set (a Go duration), is the operator's
// settings.Watching.InactivityTimeout (default 70 s): the campaign sets it
// short, so that its pauses of kube-apiserver outlast it.
// $CHAOS_CONSISTENCY_TIMEOUT, if set, is its
// settings.Persistence.ConsistencyTimeout (default 5 s, which the campaign
// keeps: its pauses outlast it, see docs/chaos.md).
//
//	CHAOS_LEDGER=/tmp/ledger operator run -A --standalone --kubeconfig ...
package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/cli"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

// kinds are the plurals of the campaign's two CRDs.
var kinds = []string{"kopfexamples", "kopfplains"}

func main() {
	path := os.Getenv("CHAOS_LEDGER")
	if path == "" {
		fmt.Fprintln(os.Stderr, "CHAOS_LEDGER is not set: it names the ledger file of handler runs")
		os.Exit(2)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "opening the ledger: %v\n", err)
		os.Exit(2)
	}
	s := settings.Default()
	if v := os.Getenv("CHAOS_INACTIVITY_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "CHAOS_INACTIVITY_TIMEOUT: %v\n", err)
			os.Exit(2)
		}
		s.Watching.InactivityTimeout = d
	}
	if v := os.Getenv("CHAOS_CONSISTENCY_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "CHAOS_CONSISTENCY_TIMEOUT: %v\n", err)
			os.Exit(2)
		}
		s.Persistence.ConsistencyTimeout = d
	}
	l := &ledger{f: f, pid: os.Getpid()}
	os.Exit(cli.MainWith(l.register, cli.Options{Settings: s}))
}

// ledger appends handler events to the ledger file.
type ledger struct {
	f   *os.File
	pid int
}

// write appends one line in a single write: O_APPEND makes it atomic
// with respect to the other writers of the file.
func (l *ledger) write(resource string, kw *kwargs.Changing, handler, event string) error {
	line := fmt.Sprintf("%s pid=%d %s/%s/%s %s %s retry=%d rv=%s\n",
		time.Now().UTC().Format(time.RFC3339Nano), l.pid, resource, kw.Namespace, kw.Name,
		handler, event, kw.Retry, kw.Body.Meta().ResourceVersion())
	if _, err := l.f.WriteString(line); err != nil {
		return fmt.Errorf("writing the ledger: %w", err)
	}
	return nil
}

func (l *ledger) register(r *registry.Registry) error {
	for _, resource := range kinds {
		sel := resources.Selector{Name: resource}
		for _, h := range []struct {
			id string
			fn func(ctx context.Context, kw *kwargs.Changing) (any, error)
		}{
			{"fast_fn", func(context.Context, *kwargs.Changing) (any, error) { return nil, nil }},
			{"slow_fn", slow},
			{"retry_fn", retryOnce},
		} {
			if err := r.AddChanging(registry.ChangingHandler{
				ID: h.id, Selector: sel, Reasons: []causes.Reason{causes.Create},
				Fn: l.recorded(resource, h.id, h.fn),
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// recorded wraps a handler's body with its ledger lines.
func (l *ledger) recorded(resource, id string, fn func(context.Context, *kwargs.Changing) (any, error)) registry.ChangingFn {
	return func(ctx context.Context, kw *kwargs.Changing) (any, error) {
		if err := l.write(resource, kw, id, "start"); err != nil {
			return nil, err
		}
		if _, err := fn(ctx, kw); err != nil {
			event := "failed"
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				event = "cancelled"
			}
			_ = l.write(resource, kw, id, event) // best effort: the result is an error anyway
			return nil, err
		}
		if err := l.write(resource, kw, id, "succeeded"); err != nil {
			return nil, err
		}
		return map[string]any{"message": id + " done"}, nil
	}
}

// slow sleeps 0.5-2 s, as long for every run on the same object.
func slow(ctx context.Context, kw *kwargs.Changing) (any, error) {
	h := fnv.New32a()
	h.Write([]byte(kw.Namespace + "/" + kw.Name))
	d := 500*time.Millisecond + time.Duration(h.Sum32()%1500)*time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// retryOnce fails temporarily on the first attempt and succeeds after.
func retryOnce(_ context.Context, kw *kwargs.Changing) (any, error) {
	if kw.Retry == 0 {
		return nil, execution.NewTemporaryError("the first attempt fails; retrying in 1 s", time.Second)
	}
	return nil, nil
}
