package leases

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"
)

// Writer writes the Leases of one namespace as one replica (Identity).
// Every write of a Lease read before is an Update with the resourceVersion
// it was read with: of two replicas writing one Lease at once, one gets a
// conflict (apierrors.IsConflict), and must read the Lease again.
type Writer struct {
	// Leases is the client of the namespace's Leases.
	Leases coordinationv1client.LeaseInterface
	// Identity is this replica's (DetectOwnID), the holder it writes.
	Identity string
	// Duration is the leaseDurationSeconds written (see Timing.Seconds);
	// 0: DefaultDuration.
	Duration time.Duration
	// Clock gives the acquireTime and renewTime written; nil: the real one.
	Clock clock.PassiveClock
}

func (w Writer) now() metav1.MicroTime {
	if w.Clock == nil {
		return metav1.NewMicroTime(time.Now())
	}
	return metav1.NewMicroTime(w.Clock.Now())
}

func (w Writer) seconds() *int32 {
	s := Timing{Duration: w.Duration}.Defaulted().Seconds()
	return &s
}

// Create creates the Lease name, held by this replica since now.
func (w Writer) Create(ctx context.Context, name string, labels map[string]string) (*coordinationv1.Lease, error) {
	now, id := w.now(), w.Identity
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: w.seconds(), AcquireTime: &now, RenewTime: &now},
	}
	created, err := w.Leases.Create(ctx, l, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating the Lease %s: %w", name, err)
	}
	return created, nil
}

// Take writes this replica as the holder of l (as read before) with a
// new renewTime: a renewal if it held it, else a claim (acquireTime now,
// one more leaseTransition if someone else held it). Whether l may be
// taken is the caller's judgement (see Observer).
func (w Writer) Take(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	now, id := w.now(), w.Identity
	l = l.DeepCopy()
	if prev := Holder(l); prev != id || l.Spec.AcquireTime == nil {
		l.Spec.AcquireTime = &now
		if prev != "" && prev != id {
			n := int32(1)
			if l.Spec.LeaseTransitions != nil {
				n = *l.Spec.LeaseTransitions + 1
			}
			l.Spec.LeaseTransitions = &n
		}
	}
	l.Spec.HolderIdentity = &id
	l.Spec.LeaseDurationSeconds = w.seconds()
	l.Spec.RenewTime = &now
	updated, err := w.Leases.Update(ctx, l, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("taking the Lease %s: %w", l.Name, err)
	}
	return updated, nil
}

// Release frees l (as read before) if this replica holds it: no holder,
// a duration of 1 s (client-go's release), so that the next holder need
// not wait. A Lease held by another is left alone (nil, nil).
func (w Writer) Release(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if Holder(l) != w.Identity {
		return nil, nil
	}
	now, none, one := w.now(), "", int32(1)
	l = l.DeepCopy()
	l.Spec.HolderIdentity = &none
	l.Spec.LeaseDurationSeconds = &one
	l.Spec.RenewTime = &now
	updated, err := w.Leases.Update(ctx, l, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("releasing the Lease %s: %w", l.Name, err)
	}
	return updated, nil
}

// Delete deletes the Lease name; one that is gone already is no error.
func (w Writer) Delete(ctx context.Context, name string) error {
	if err := w.Leases.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the Lease %s: %w", name, err)
	}
	return nil
}
