package peering

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"

	"github.com/kopf-go/kopf/runtime/leases"
)

// Elector elects the one active replica among the kopf-go operators of
// equal priority through a coordination.k8s.io Lease: its Standby toggle
// is on while this replica does not hold the Lease.
//
// It is client-go's leader election (tools/leaderelection, the algorithm
// and its defaults) on runtime/leases (client-go's package links the whole
// typed clientset, which an operator does not link otherwise). A candidate
// tries to take the Lease every RetryPeriod (with jitter); it may take it
// when it is free (no holder: released) or expired by the one liveness
// rule of runtime/leases: its record has not changed for its duration as
// this process observes it on its own clock (no clock skew between
// replicas matters). The holder renews every RetryPeriod and stands down
// if it could not renew within RenewDeadline, before any other replica
// may take the Lease (RenewDeadline < Duration): RenewDeadline is
// counted from the start of its last successful renewal (the earliest
// moment another replica can have observed that renewal), and each
// renewal waits for the API server no later than that, so that a
// replica cut off from the API server (the connection stalled or
// dropped) stands down RenewDeadline after its last renewal began, at
// the latest: Standby on, then OnLost. On Run's end the holder releases
// the Lease (client-go's ReleaseOnCancel): a stand-by replica takes over
// at its next try.
type Elector struct {
	Leases    coordinationv1client.LeasesGetter
	Namespace string
	Name      string
	Identity  Identity
	Timing    leases.Timing // zero values: the leases package's defaults
	Standby   *Toggle
	Logger    *slog.Logger
	Clock     clock.PassiveClock // nil: the real clock
	// OnLost is called when this replica stands down for a Lease it could
	// not renew in time (after Standby is on): what it still does as the
	// active replica must end now (nil: nothing more).
	OnLost func()

	held    *leases.Held
	leading bool
	leader  string // the holder last reported
}

func (e *Elector) where() string { return e.Namespace + "/" + e.Name }

func (e *Elector) now() time.Time {
	if e.Clock == nil {
		return time.Now()
	}
	return e.Clock.Now()
}

func (e *Elector) lease() *leases.Held {
	if e.held == nil {
		e.Timing = e.Timing.Defaulted()
		e.held = &leases.Held{
			Writer: leases.Writer{Leases: e.Leases.Leases(e.Namespace), Identity: string(e.Identity), Duration: e.Timing.Duration, Clock: e.Clock},
			Name:   e.Name,
		}
	}
	return e.held
}

// Run takes part in the election until ctx is done, then releases the
// Lease if it holds it.
func (e *Elector) Run(ctx context.Context) {
	e.lease()               // the Timing defaulted
	var lastRenew time.Time // the start of the last successful renewal
	for {
		start := e.now()
		ok, err := e.tryAcquireOrRenew(ctx, e.attemptTimeout(start, lastRenew))
		switch {
		case ok:
			lastRenew = start
			e.lead()
		case e.leading && e.now().Sub(lastRenew) >= e.Timing.RenewDeadline:
			e.lose()
		}
		if err != nil && ctx.Err() == nil {
			e.Logger.Debug(fmt.Sprintf("The Lease %s cannot be acquired or renewed: %v", e.where(), err))
		}
		delay := e.Timing.RetryPeriod
		if !e.leading {
			delay = time.Duration(float64(delay) * (1 + 0.2*rand.Float64())) // client-go's JitterFactor 1.2
		} else {
			delay = min(delay, max(0, lastRenew.Add(e.Timing.RenewDeadline).Sub(e.now())))
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			e.release(context.WithoutCancel(ctx))
			return
		case <-t.C:
		}
	}
}

// attemptTimeout bounds one try to take or renew the Lease started at
// start: RenewDeadline (at least 1 s) for a candidate; for the holder,
// what is left of RenewDeadline since its last renewal began, so that it
// stands down in time even when the API server does not answer.
func (e *Elector) attemptTimeout(start, lastRenew time.Time) time.Duration {
	timeout := max(e.Timing.RenewDeadline, time.Second)
	if e.leading {
		timeout = min(timeout, lastRenew.Add(e.Timing.RenewDeadline).Sub(start))
	}
	return timeout
}

// lose stands down: the Lease could not be renewed within RenewDeadline.
func (e *Elector) lose() {
	e.leading = false
	e.Standby.Set(true)
	e.Logger.Warn(fmt.Sprintf("The Lease %s is lost: pausing operations until it is held again.", e.where()))
	if e.OnLost != nil {
		e.OnLost()
	}
}

// lead turns this replica active once it holds the Lease.
func (e *Elector) lead() {
	if !e.leading {
		e.leading = true
		e.Logger.Info(fmt.Sprintf("This replica is the active one: it holds the Lease %s.", e.where()))
		e.Standby.Set(false)
	}
}

// tryAcquireOrRenew is client-go's step (leases.Held.TryAcquireOrRenew),
// bounded by timeout; it logs a new holder.
func (e *Elector) tryAcquireOrRenew(ctx context.Context, timeout time.Duration) (bool, error) {
	h := e.lease()
	if timeout <= 0 {
		return false, context.DeadlineExceeded
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ok, err := h.TryAcquireOrRenew(ctx)
	if holder := leases.Holder(h.Last()); holder != "" && holder != e.leader {
		e.leader = holder
		if holder != string(e.Identity) {
			e.Logger.Info(fmt.Sprintf("Standing by: the active replica is %s (the holder of the Lease %s).", holder, e.where()))
		}
	}
	return ok, err
}

// release frees the Lease if this replica holds it (client-go's release:
// no holder, a duration of 1 s), so that a stand-by replica takes it at
// once.
func (e *Elector) release(ctx context.Context) {
	e.Standby.Set(true)
	if !e.leading {
		return
	}
	e.leading = false
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := e.lease().Release(ctx); err != nil {
		e.Logger.Warn(fmt.Sprintf("The Lease %s could not be released: %v", e.where(), err))
		return
	}
	e.Logger.Info(fmt.Sprintf("The Lease %s is released.", e.where()))
}

// LeaseNamespace is where the Lease lives when the setting says nothing:
// $POD_NAMESPACE, else the in-cluster service account's namespace, else
// fallback ("" → "default").
func LeaseNamespace(setting, fallback string) string {
	if setting != "" {
		return setting
	}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if data, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		if ns := strings.TrimSpace(string(data)); ns != "" {
			return ns
		}
	}
	if fallback != "" {
		return fallback
	}
	return "default"
}

// LeaseName is the Lease's name for a peering name and a priority when
// the setting says nothing: "kopf-peering-<name>-<priority>" ("m" for a
// negative sign): one Lease per priority, as only the replicas of equal
// priority elect among themselves (those of a lower one pause anyway).
func LeaseName(setting, peering string, priority int) string {
	if setting != "" {
		return setting
	}
	p := strconv.Itoa(priority)
	if priority < 0 {
		p = "m" + strconv.Itoa(-priority)
	}
	return "kopf-peering-" + peering + "-" + p
}
