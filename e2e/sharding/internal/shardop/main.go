// Command shardop is the operator that the sharding tests run as several
// processes, kill and add: a creation handler and an update handler of
// KopfExample objects, each sleeping $SHARDOP_SLEEP (20ms by default) and
// appending every invocation to the file $SHARDOP_RECORD as a line
//
//	<event> <handler> <namespace/name> wave=<spec.wave> pid=<pid> t=<unix ns> retry=<n>
//
// where the event is "invoked" when a handler starts and "finished" when it
// returns (for the deletion handlers of objects named "del-*", see
// addDeletion); each line is written with O_APPEND in one write, so that the
// processes share the file and the record survives a SIGKILL. Sharding is
// on with short leases (8 s, renewed every second) so that a killed
// replica's buckets move within seconds. A replica gives its buckets up
// when its Lease has not been renewed for the duration less two renew
// intervals: 6 s here. (With 4 s, 2 s of slow renewals on a loaded CI
// machine made replicas give up and abandon their own cycles, whose
// handlers then ran again: the documented limit of a replica cut off,
// docs/sharding.md, which the tests of handling once must not hit.)
//
//	SHARDOP_RECORD=/tmp/record shardop run -A --shards 64 -v --kubeconfig ...
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/cli"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

func main() {
	os.Exit(cli.MainWith(register, cli.Options{Sharding: &operator.Sharding{
		Group:          "shardop",
		Namespace:      "default",
		Identity:       os.Getenv("SHARDOP_IDENTITY"),
		LeaseDuration:  8 * time.Second,
		RenewInterval:  time.Second,
		HandoffTimeout: 10 * time.Second,
	}}))
}

func register(r *registry.Registry) error {
	sleep := 20 * time.Millisecond
	if v := os.Getenv("SHARDOP_SLEEP"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("SHARDOP_SLEEP: %w", err)
		}
		sleep = d
	}
	sel := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	handler := func(id string) registry.ChangingFn {
		return func(ctx context.Context, kw *kwargs.Changing) (any, error) {
			if err := record("invoked", id, kw); err != nil {
				return nil, err
			}
			select {
			case <-time.After(sleep):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return map[string]any{"pid": os.Getpid(), "wave": kw.Body.Spec()["wave"]}, record("finished", id, kw)
		}
	}
	if err := r.AddChanging(registry.ChangingHandler{ID: "create_fn", Selector: sel, Reasons: []causes.Reason{causes.Create}, Fn: handler("create_fn")}); err != nil {
		return err
	}
	// flaky_fn, for objects with spec.flaky: fails twice with a temporary
	// error (retried after 3 s), then succeeds; its retries are counted
	// in the persisted progress, so a hand-off must not reset them.
	if err := r.AddChanging(registry.ChangingHandler{
		ID: "flaky_fn", Selector: sel, Reasons: []causes.Reason{causes.Create},
		When: func(kw *kwargs.Changing) bool { return kw.Body.Spec()["flaky"] == true },
		Fn: func(ctx context.Context, kw *kwargs.Changing) (any, error) {
			if err := record("invoked", "flaky_fn", kw); err != nil {
				return nil, err
			}
			if kw.Retry < 2 {
				return nil, &execution.TemporaryError{Message: "not yet", Delay: 3 * time.Second}
			}
			return map[string]any{"pid": os.Getpid(), "retry": kw.Retry}, record("finished", "flaky_fn", kw)
		},
	}); err != nil {
		return err
	}
	// daemon_fn, for objects with spec.daemon: runs until it is told to
	// stop; "invoked" when it starts, "finished" when it returns.
	if err := r.AddDaemon(registry.DaemonHandler{
		ID: "daemon_fn", Selector: sel,
		When: func(kw *kwargs.Daemon) bool { return kw.Body.Spec()["daemon"] == true },
		Fn: func(ctx context.Context, kw *kwargs.Daemon) (any, error) {
			if err := recordLine("invoked", "daemon_fn", kw.Namespace, kw.Name, kw.Body.Spec()["wave"], 0); err != nil {
				return nil, err
			}
			select {
			case <-kw.Stopped.Done():
			case <-ctx.Done():
			}
			return nil, recordLine("finished", "daemon_fn", kw.Namespace, kw.Name, kw.Body.Spec()["wave"], 0)
		},
	}); err != nil {
		return err
	}
	if err := addDeletion(r, sel); err != nil {
		return err
	}
	return r.AddChanging(registry.ChangingHandler{ID: "update_fn", Selector: sel, Reasons: []causes.Reason{causes.Update}, Fn: handler("update_fn")})
}

// record appends one line about a changing handler to $SHARDOP_RECORD.
func record(event, handler string, kw *kwargs.Changing) error {
	return recordLine(event, handler, kw.Namespace, kw.Name, kw.Body.Spec()["wave"], kw.Retry)
}

// recordLine appends one line to $SHARDOP_RECORD in one write.
func recordLine(event, handler, namespace, name string, wave any, retry int) error {
	f, err := os.OpenFile(os.Getenv("SHARDOP_RECORD"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	line := fmt.Sprintf("%s %s %s/%s wave=%v pid=%d t=%d retry=%d\n", event, handler, namespace, name, wave, os.Getpid(), time.Now().UnixNano(), retry)
	_, err = f.WriteString(line)
	return err
}

// addDeletion registers, for the objects named "del-*" only (the others
// get no finalizer), delete_fn, which needs Kopf's finalizer, and gone_fn,
// an event handler that records every DELETED event (with wave=gone) of
// such an object: a deletion as the operator reports it to on.event.
func addDeletion(r *registry.Registry, sel resources.Selector) error {
	deletable := func(name string) bool { return strings.HasPrefix(name, "del-") }
	err := r.AddChanging(registry.ChangingHandler{
		ID: "delete_fn", Selector: sel, Reasons: []causes.Reason{causes.Delete},
		When: func(kw *kwargs.Changing) bool { return deletable(kw.Name) },
		Fn: func(_ context.Context, kw *kwargs.Changing) (any, error) {
			if err := record("invoked", "delete_fn", kw); err != nil {
				return nil, err
			}
			return nil, record("finished", "delete_fn", kw)
		},
	})
	if err != nil {
		return err
	}
	return r.AddEvent(registry.EventHandler{
		ID: "gone_fn", Selector: sel,
		When: func(kw *kwargs.Event) bool { return deletable(kw.Name) && kw.Type == "DELETED" },
		Fn: func(_ context.Context, kw *kwargs.Event) error {
			return recordLine("invoked", "gone_fn", kw.Namespace, kw.Name, "gone", 0)
		},
	})
}
