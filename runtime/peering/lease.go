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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Leases is the resource of the Elector's Lease.
var Leases = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// microTime is the format of a Lease's acquireTime and renewTime.
const microTime = "2006-01-02T15:04:05.000000Z07:00"

// Elector elects the one active replica among the kopf-go operators of
// equal priority through a coordination.k8s.io Lease: its Standby toggle
// is on while this replica does not hold the Lease.
//
// It is client-go's leader election (tools/leaderelection, the algorithm
// and its defaults), over the dynamic client: client-go's package links
// the whole typed clientset, which an operator does not link otherwise.
// A candidate tries to take the Lease every RetryPeriod (with jitter);
// it may take it when it is free (no holder: released) or when its record
// has not changed for Duration, as this process observes it on its own
// clock (no clock skew between replicas matters). The holder renews every
// RetryPeriod and stands down (Standby on) if it could not renew within
// RenewDeadline, before any other replica may take the Lease (RenewDeadline
// < Duration). On Run's end the holder releases the Lease (client-go's
// ReleaseOnCancel): a stand-by replica takes over at its next try.
type Elector struct {
	Client    dynamic.NamespaceableResourceInterface // Leases
	Namespace string
	Name      string
	Identity  Identity
	Duration  time.Duration
	Renew     time.Duration
	Retry     time.Duration
	Standby   *Toggle
	Logger    *slog.Logger

	observed     string    // the record last seen: holder and renewTime
	observedTime time.Time // when it was first seen as it is
	leading      bool
	leader       string // the holder last reported
}

func (e *Elector) where() string { return e.Namespace + "/" + e.Name }

// Run takes part in the election until ctx is done, then releases the
// Lease if it holds it.
func (e *Elector) Run(ctx context.Context) {
	var lastRenew time.Time
	for {
		ok, err := e.tryAcquireOrRenew(ctx, time.Now())
		now := time.Now()
		switch {
		case ok:
			lastRenew = now
			if !e.leading {
				e.leading = true
				e.Logger.Info(fmt.Sprintf("This replica is the active one: it holds the Lease %s.", e.where()))
				e.Standby.Set(false)
			}
		case e.leading && now.Sub(lastRenew) >= e.Renew:
			e.leading = false
			e.Standby.Set(true)
			e.Logger.Warn(fmt.Sprintf("The Lease %s is lost: pausing operations until it is held again.", e.where()))
		}
		if err != nil && ctx.Err() == nil {
			e.Logger.Debug(fmt.Sprintf("The Lease %s cannot be acquired or renewed: %v", e.where(), err))
		}
		delay := e.Retry
		if !e.leading {
			delay = time.Duration(float64(e.Retry) * (1 + 0.2*rand.Float64())) // client-go's JitterFactor 1.2
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

// tryAcquireOrRenew is client-go's: take a free or expired Lease, renew
// our own, or leave someone else's alone.
func (e *Elector) tryAcquireOrRenew(ctx context.Context, now time.Time) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, max(e.Renew, time.Second))
	defer cancel()
	ri := e.Client.Namespace(e.Namespace)
	u, err := ri.Get(ctx, e.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "coordination.k8s.io/v1",
			"kind":       "Lease",
			"metadata":   map[string]any{"name": e.Name, "namespace": e.Namespace},
			"spec":       e.spec(now, now, 0),
		}}
		if _, err := ri.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			return false, err
		}
		e.observe(string(e.Identity)+"\n"+now.UTC().Format(microTime), now)
		return true, nil
	}
	if err != nil {
		return false, err
	}
	holder, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity")
	renewed, _, _ := unstructured.NestedString(u.Object, "spec", "renewTime")
	seconds, _, _ := unstructured.NestedInt64(u.Object, "spec", "leaseDurationSeconds")
	transitions, _, _ := unstructured.NestedInt64(u.Object, "spec", "leaseTransitions")
	acquired, _, _ := unstructured.NestedString(u.Object, "spec", "acquireTime")
	e.observe(holder+"\n"+renewed, now)
	if holder != "" && holder != e.leader {
		e.leader = holder
		if holder != string(e.Identity) {
			e.Logger.Info(fmt.Sprintf("Standing by: the active replica is %s (the holder of the Lease %s).", holder, e.where()))
		}
	}
	duration := time.Duration(seconds) * time.Second
	if duration <= 0 {
		duration = e.Duration
	}
	mine := holder == string(e.Identity)
	if holder != "" && !mine && e.observedTime.Add(duration).After(now) {
		return false, nil // held by someone else, not expired
	}
	acquireTime, err := time.Parse(microTime, acquired)
	if !mine || err != nil {
		acquireTime = now
		if !mine {
			transitions++
		}
	}
	if err := unstructured.SetNestedField(u.Object, e.spec(acquireTime, now, transitions), "spec"); err != nil {
		return false, err
	}
	if _, err := ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		return false, err // a conflict: someone else was faster
	}
	e.observe(string(e.Identity)+"\n"+now.UTC().Format(microTime), now)
	e.leader = string(e.Identity)
	return true, nil
}

func (e *Elector) spec(acquired, renewed time.Time, transitions int64) map[string]any {
	return map[string]any{
		"holderIdentity":       string(e.Identity),
		"leaseDurationSeconds": int64(e.Duration / time.Second),
		"acquireTime":          acquired.UTC().Format(microTime),
		"renewTime":            renewed.UTC().Format(microTime),
		"leaseTransitions":     transitions,
	}
}

// observe notes a record; the time it was first seen counts.
func (e *Elector) observe(record string, now time.Time) {
	if record != e.observed {
		e.observed, e.observedTime = record, now
	}
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
	ri := e.Client.Namespace(e.Namespace)
	u, err := ri.Get(ctx, e.Name, metav1.GetOptions{})
	if err == nil {
		if holder, _, _ := unstructured.NestedString(u.Object, "spec", "holderIdentity"); holder == string(e.Identity) {
			now := time.Now().UTC().Format(microTime)
			_ = unstructured.SetNestedField(u.Object, "", "spec", "holderIdentity")
			_ = unstructured.SetNestedField(u.Object, int64(1), "spec", "leaseDurationSeconds")
			_ = unstructured.SetNestedField(u.Object, now, "spec", "renewTime")
			_, err = ri.Update(ctx, u, metav1.UpdateOptions{})
		}
	}
	if err != nil {
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
