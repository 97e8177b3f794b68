// Command partop is the operator of e2e/partition's replicas: a creation
// and an update handler of KopfExample objects, each waiting
// $PARTOP_SLEEP (300ms by default, so that a cut finds some in progress)
// and appending to the file $PARTOP_RECORD a line per step:
//
//	<event> <handler> <namespace/name> wave=<spec.wave> pid=<pid> t=<unix ns>
//
// where the event is "invoked" when a handler starts, "finished" when it
// returns, "cancelled" when its context ended first (the replica gave
// its objects up); each line in one write with O_APPEND, so that the
// replicas share the file. The replica's identity is $PARTOP_IDENTITY
// (its peering and sharding Leases). The Leases are short: the HA Lease
// 3 s, renew deadline 2 s, retry 0.5 s; with $PARTOP_SHARDS set,
// sharding in that many buckets with member Leases of 4 s renewed every
// second.
//
//	PARTOP_RECORD=/tmp/record partop run -n NS -P ha --kubeconfig ...
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/cli"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

func main() {
	s := settings.Default()
	s.Peering.Identity = os.Getenv("PARTOP_IDENTITY")
	s.Peering.LeaseDuration, s.Peering.RenewDeadline, s.Peering.RetryPeriod = 3*time.Second, 2*time.Second, 500*time.Millisecond
	opts := cli.Options{Settings: s}
	if v := os.Getenv("PARTOP_SHARDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "$PARTOP_SHARDS: %v\n", err)
			os.Exit(2)
		}
		opts.Sharding = &operator.Sharding{
			Buckets: n, Group: "partop", Namespace: "default", Identity: s.Peering.Identity,
			LeaseDuration: 4 * time.Second, RenewInterval: time.Second, HandoffTimeout: 10 * time.Second,
		}
	}
	os.Exit(cli.MainWith(register, opts))
}

func register(r *registry.Registry) error {
	sleep := 300 * time.Millisecond
	if v := os.Getenv("PARTOP_SLEEP"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("$PARTOP_SLEEP: %w", err)
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
				_ = record("cancelled", id, kw) // the error is ctx's either way
				return nil, ctx.Err()
			}
			return map[string]any{"pid": os.Getpid()}, record("finished", id, kw)
		}
	}
	if err := r.AddChanging(registry.ChangingHandler{ID: "create_fn", Selector: sel, Reasons: []causes.Reason{causes.Create}, Fn: handler("create_fn")}); err != nil {
		return err
	}
	return r.AddChanging(registry.ChangingHandler{ID: "update_fn", Selector: sel, Reasons: []causes.Reason{causes.Update}, Fn: handler("update_fn")})
}

// record appends one line to $PARTOP_RECORD in one write.
func record(event, handler string, kw *kwargs.Changing) error {
	f, err := os.OpenFile(os.Getenv("PARTOP_RECORD"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	line := fmt.Sprintf("%s %s %s/%s wave=%v pid=%d t=%d\n", event, handler, kw.Namespace, kw.Name, kw.Body.Spec()["wave"], os.Getpid(), time.Now().UnixNano())
	_, err = f.WriteString(line)
	return err
}
