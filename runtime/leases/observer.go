package leases

import (
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/clock"
)

// Observer judges whether the Leases of other replicas are live, by what
// this replica observed on its own clock (client-go's leader election's
// rule): a Lease with a holder is live while its record — holder,
// renewTime, resourceVersion — was seen to change within its
// leaseDurationSeconds before now; a Lease seen for the first time counts
// as changed when it was first seen, so it is live for one duration from
// then. A Lease without a holder is not live (it is free).
//
// Only the Leases passed to Live are observed: an observer that looks
// once every period judges no better than that period. The zero value is
// ready to use, on the real clock; it is safe for concurrent use.
type Observer struct {
	// Clock is the observer's clock; nil: the real one.
	Clock clock.PassiveClock

	mu   sync.Mutex
	seen map[string]observed // by namespace/name
}

// observed is a Lease's record and when it was first seen as it is.
type observed struct {
	record string
	since  time.Time
}

func (o *Observer) now() time.Time {
	if o.Clock == nil {
		return time.Now()
	}
	return o.Clock.Now()
}

// Live notes the Lease's record as observed now and says whether it is
// live: held, and changed within its duration (fallback if it has none).
func (o *Observer) Live(l *coordinationv1.Lease, fallback time.Duration) bool {
	since := o.Observe(l)
	if Holder(l) == "" {
		return false
	}
	return o.now().Sub(since) < duration(l, fallback)
}

// Observe notes the Lease's record and returns when it was first seen as
// it is now.
func (o *Observer) Observe(l *coordinationv1.Lease) time.Time {
	now := o.now()
	key, rec := Key(l), record(l)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil {
		o.seen = map[string]observed{}
	}
	s, ok := o.seen[key]
	if !ok || s.record != rec {
		s = observed{record: rec, since: now}
		o.seen[key] = s
	}
	return s.since
}

// Forget drops the observations of the Leases not in keep (namespace/name
// → true): those that are gone. A Lease seen again later is new.
func (o *Observer) Forget(keep map[string]bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k := range o.seen {
		if !keep[k] {
			delete(o.seen, k)
		}
	}
}

// Key is a Lease's key in an Observer: namespace/name.
func Key(l *coordinationv1.Lease) string { return l.Namespace + "/" + l.Name }

// record is what a Lease's change is judged by.
func record(l *coordinationv1.Lease) string {
	renewed := ""
	if l.Spec.RenewTime != nil {
		renewed = l.Spec.RenewTime.UTC().Format(time.RFC3339Nano)
	}
	return Holder(l) + "\n" + renewed + "\n" + l.ResourceVersion
}

// duration is a Lease's leaseDurationSeconds, or fallback.
func duration(l *coordinationv1.Lease, fallback time.Duration) time.Duration {
	if s := l.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
		return time.Duration(*s) * time.Second
	}
	if fallback <= 0 {
		return DefaultDuration
	}
	return fallback
}

// Holder is a Lease's holderIdentity ("" if none).
func Holder(l *coordinationv1.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
