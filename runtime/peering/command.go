package peering

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Command is what `freeze` and `resume` do (Kopf's touch_command): one
// record written into the peering objects of a name, in each namespace
// given (KopfPeering) or cluster-wide (ClusterKopfPeering), in every
// peering resource served (kopf.dev, zalando.org). Freeze writes a live
// record of a priority, which pauses the operators of lower priorities
// for its lifetime; resume removes it (lifetime 0).
type Command struct {
	Name       string
	Namespaces []string // none: cluster-wide
	Identity   Identity
	Priority   int
	Lifetime   time.Duration
	Logger     *slog.Logger
}

// Run writes the record. It fails if no peering resource is served
// (Kopf's "Cannot find the peering resource for ...") or if the object
// exists nowhere (Kopf only logs that).
func (c Command) Run(ctx context.Context, cfg *rest.Config) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the dynamic client: %w", err)
	}
	clusterwide := len(c.Namespaces) == 0
	gvrs, err := Resolve(dc, clusterwide)
	if err != nil {
		return err
	}
	if len(gvrs) == 0 {
		return fmt.Errorf("Cannot find the peering resource for %s.", Describe(Selectors(clusterwide))) //nolint:staticcheck // Kopf's wording
	}
	namespaces := c.Namespaces
	if clusterwide {
		namespaces = []string{""}
	}
	var errs []error
	var missing []string
	found := false
	for _, gvr := range gvrs {
		for _, ns := range namespaces {
			o := Object{Client: dyn.Resource(gvr), Namespace: ns, Name: c.Name, Logger: c.Logger}
			ok, err := o.Touch(ctx, c.Identity, c.Priority, c.Lifetime, false)
			switch {
			case err != nil:
				errs = append(errs, err)
			case ok:
				found = true
			default:
				missing = append(missing, fmt.Sprintf("%s %s", gvr.Resource, o.where()))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("the peering %q is not found: %s", c.Name, strings.Join(missing, ", "))
	}
	return nil
}
