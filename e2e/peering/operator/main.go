// Command operator is the operator of e2e/peering's process tests (HA
// failover by SIGKILL, the freeze and resume commands): one creation
// handler, create_fn, on kopfexamples.kopf.dev, which appends one line to
// the ledger file $PEERING_LEDGER per run, in a single write(2) to a file
// opened with O_APPEND (so that the lines of several processes never
// interleave and survive a SIGKILL):
//
//	<namespace>/<name> pid=<pid>
//
// $PEERING_LEASE_DURATION, $PEERING_RENEW_DEADLINE, $PEERING_RETRY_PERIOD
// (Go durations) shorten the Lease's timings for the test.
//
//	PEERING_LEDGER=/tmp/ledger operator run -n ns -P ha --kubeconfig ...
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/cli"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

func main() {
	s := settings.Default()
	for _, v := range []struct {
		env string
		to  *time.Duration
	}{
		{"PEERING_LEASE_DURATION", &s.Peering.LeaseDuration},
		{"PEERING_RENEW_DEADLINE", &s.Peering.RenewDeadline},
		{"PEERING_RETRY_PERIOD", &s.Peering.RetryPeriod},
	} {
		if raw := os.Getenv(v.env); raw != "" {
			d, err := time.ParseDuration(raw)
			if err != nil {
				fmt.Fprintf(os.Stderr, "$%s: %v\n", v.env, err)
				os.Exit(2)
			}
			*v.to = d
		}
	}
	var ledger *os.File
	if path := os.Getenv("PEERING_LEDGER"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "opening the ledger: %v\n", err)
			os.Exit(2)
		}
		ledger = f
	}
	pid := os.Getpid()
	register := func(r *registry.Registry) error {
		return r.AddChanging(registry.ChangingHandler{
			ID: "create_fn", Selector: resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
			Reasons: []causes.Reason{causes.Create},
			Fn: func(_ context.Context, kw *kwargs.Changing) (any, error) {
				if ledger != nil {
					if _, err := fmt.Fprintf(ledger, "%s/%s pid=%d\n", kw.Namespace, kw.Name, pid); err != nil {
						return nil, err
					}
				}
				return map[string]any{"pid": pid}, nil
			},
		})
	}
	os.Exit(cli.MainWith(register, cli.Options{Settings: s}))
}
