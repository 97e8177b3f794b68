package leases

import (
	"context"
	"fmt"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Held is one Lease, Name, that this replica holds or tries to hold. The
// loop that calls it (how often, what to do when it is lost) is the
// user's: Timing says how often. Its methods must not be called
// concurrently; Last may be.
type Held struct {
	Writer
	// Name is the Lease's name; Labels are given to it when it is created.
	Name   string
	Labels map[string]string

	// Observer judges the Lease when another replica holds it; its zero
	// value is on Writer.Clock once the first call has set it.
	observer Observer
	once     sync.Once

	mu   sync.Mutex
	last *coordinationv1.Lease // as last read or written; nil: read again
}

func (h *Held) init() {
	h.once.Do(func() { h.observer.Clock = h.Clock })
}

// Last is the Lease as last read or written (nil if unknown).
func (h *Held) Last() *coordinationv1.Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

func (h *Held) remember(l *coordinationv1.Lease) {
	h.mu.Lock()
	h.last = l
	h.mu.Unlock()
}

// Renew creates the Lease or renews it as this replica's, whoever held
// it: for a Lease only this replica writes (its membership). It reads the
// Lease only when it does not know its last version.
func (h *Held) Renew(ctx context.Context) error {
	h.init()
	l := h.Last()
	if l == nil {
		got, err := h.Leases.Get(ctx, h.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			created, err := h.Create(ctx, h.Name, h.Labels)
			h.remember(created)
			return err
		case err != nil:
			return fmt.Errorf("reading the Lease %s: %w", h.Name, err)
		}
		l = got
	}
	updated, err := h.Take(ctx, l)
	h.remember(updated) // nil on an error: read it again next time
	return err
}

// TryAcquireOrRenew is client-go's leader-election step: it creates the
// Lease if there is none, renews it if this replica holds it, takes it
// if it is free or expired (its record unchanged for its duration, as
// this replica observed it: Observer), and otherwise leaves it to its
// holder. It says whether this replica holds the Lease now; an error is
// the API server's (a conflict: another replica wrote it first).
func (h *Held) TryAcquireOrRenew(ctx context.Context) (bool, error) {
	h.init()
	l, err := h.Leases.Get(ctx, h.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		created, err := h.Create(ctx, h.Name, h.Labels)
		if err != nil {
			return false, err
		}
		h.remember(created)
		h.observer.Observe(created)
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Lease %s: %w", h.Name, err)
	}
	h.remember(l)
	if holder := Holder(l); holder != h.Identity && h.observer.Live(l, h.Duration) {
		return false, nil // held by another, not expired
	}
	updated, err := h.Take(ctx, l)
	if err != nil {
		return false, err
	}
	h.remember(updated)
	h.observer.Observe(updated)
	return true, nil
}

// Release frees the Lease if this replica holds it (see Writer.Release),
// reading it first.
func (h *Held) Release(ctx context.Context) error {
	l, err := h.Leases.Get(ctx, h.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the Lease %s: %w", h.Name, err)
	}
	released, err := h.Writer.Release(ctx, l)
	if err != nil {
		return err
	}
	if released != nil {
		h.remember(released)
	}
	return nil
}

// Delete deletes the Lease (a membership that ends).
func (h *Held) Delete(ctx context.Context) error {
	h.remember(nil)
	return h.Writer.Delete(ctx, h.Name)
}
