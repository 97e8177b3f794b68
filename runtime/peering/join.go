package peering

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/kopf-go/kopf/runtime/leases"
	"github.com/kopf-go/kopf/runtime/scope"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Member is an operator's membership of its peering (docs/peering.md):
// a keep-alive and an observer per peering object (one
// ClusterKopfPeering, or a KopfPeering per served namespace; in kopf.dev
// and in zalando.org where both are served), and with settings.Peering's
// Lease, the election of the active replica.
type Member struct {
	Settings settings.Peering
	// Clusterwide: the operator serves the whole cluster (no namespaces,
	// or all of them), so its peering is the ClusterKopfPeering, unless
	// Settings.Clusterwide says otherwise.
	Clusterwide bool
	Scope       scope.Scope // the served namespaces: those of the KopfPeerings
	Discovery   discovery.DiscoveryInterface
	Client      dynamic.Interface
	// Identity is this replica's in the peering records and the Lease
	// (one per operator run, shared with its other Leases); "": the
	// setting's Identity, else Kopf's detect_own_id.
	Identity Identity
	// Leases is the client of the HA election's Lease (settings.Peering.Lease).
	Leases coordinationv1client.LeasesGetter
	// RetryCap bounds the backoff of the peering's resolution (1, 2, 4...
	// seconds up to it) while the API server fails.
	RetryCap time.Duration
	Logger   *slog.Logger
	// OnPause is told when the operator is to pause (true) or resume
	// (false): Toggles.OnChange.
	OnPause func(paused bool)
	// OnLeaseLost is told, after OnPause(true), that this replica stood
	// down as the active one because it could not renew the HA Lease in
	// time (see Elector): what is still running as the active replica
	// must end now. Nil: nothing more.
	OnLeaseLost func()
}

// Start joins the peering in the background, until the stop it returns is
// called (once the operator's workers are done: the Lease is released
// then, and the operator's records removed; it waits up to 10 s).
//
// The operator is paused from the start (before Start returns) until the
// peering is resolved (the resources discovered, the objects read;
// retried while the API server fails), so that no replica handles
// anything before it knows whether it may. A peering object missing at
// start: with a mandatory peering (-P), the operator stays paused until
// it appears (as Kopf 1.x); with the default one, it runs standalone
// (Kopf's log line) and joins the peering if the object appears later.
func (m *Member) Start(ctx context.Context) (stop func()) {
	toggles := &Toggles{OnChange: m.OnPause}
	starting := toggles.Make("peering is starting", true)
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer starting.Drop() // after the toggles that replace it are made
		m.join(ctx, &wg, toggles)
	}()
	return func() {
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			m.Logger.Warn("The peering did not stop in time; exiting anyway.")
		}
	}
}

// join resolves the peering and starts its goroutines in wg.
func (m *Member) join(ctx context.Context, wg *sync.WaitGroup, toggles *Toggles) {
	s := m.Settings
	clusterwide := m.Clusterwide
	if s.Clusterwide != nil {
		clusterwide = *s.Clusterwide
	}
	r, ok := m.resolveRetrying(ctx, clusterwide)
	if !ok || !m.usable(r, clusterwide, toggles) {
		return
	}
	identity := m.Identity
	if identity == "" {
		identity = Identity(s.Identity)
	}
	if identity == "" {
		identity = DetectOwnID(false)
	}
	m.Logger.Debug(fmt.Sprintf("Peering as %s in '%s' with the priority %d.", identity, s.Name, s.Priority))
	if !r.found {
		if s.Mandatory {
			m.Logger.Warn(fmt.Sprintf("The peering %q is not found, but it is mandatory: the operator is paused until it appears.", s.Name))
		} else {
			m.Logger.Info("Default peering object not found, falling back to the standalone mode.")
		}
	}
	startLease := m.lease(ctx, wg, toggles, identity, r.namespaces)
	if r.found {
		startLease()
	}
	// Paused until the peers are known: the first judgement of any of the
	// objects (Kopf preactivates its toggle when the peering is mandatory).
	// A mandatory peering missing in one group but present in another
	// pauses nothing.
	unseen := toggles.Make("peering "+s.Name+" is not observed yet", r.found || s.Mandatory)
	for _, o := range r.objects {
		m.observe(ctx, wg, toggles, identity, o, startLease, unseen)
	}
}

// resolved is what resolve found: the peering resources served, the
// namespaces of the peering objects, the objects that may be read, and
// whether any of them exists.
type resolved struct {
	gvrs       []schema.GroupVersionResource
	namespaces []string
	objects    []Object
	found      bool
}

// resolveRetrying resolves the peering, retrying with backoff until it
// succeeds (ok) or ctx is done.
func (m *Member) resolveRetrying(ctx context.Context, clusterwide bool) (resolved, bool) {
	retry := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: m.RetryCap}
	for {
		r, err := m.resolve(ctx, clusterwide)
		if err == nil {
			return r, true
		}
		delay := retry.Step()
		m.Logger.Debug(fmt.Sprintf("The peering cannot be resolved: %v; retrying in %g seconds.", err, delay.Round(100*time.Millisecond).Seconds()))
		select {
		case <-ctx.Done():
			return resolved{}, false
		case <-time.After(delay):
		}
	}
}

// usable says whether the peering can be joined: its resources are
// served and some object may be read. If not, the operator runs
// standalone, or stays paused if the peering is mandatory.
func (m *Member) usable(r resolved, clusterwide bool, toggles *Toggles) bool {
	s := m.Settings
	switch {
	case len(r.gvrs) == 0 && s.Mandatory:
		m.Logger.Warn(fmt.Sprintf("The peering resources %s are not served (their CRDs are missing), but the peering %q is mandatory: the operator is paused.", Describe(Selectors(clusterwide)), s.Name))
		toggles.Make("peering CRD is missing", true)
	case len(r.gvrs) == 0:
		m.Logger.Info("Default peering object not found, falling back to the standalone mode.")
	case len(r.objects) == 0 && s.Mandatory:
		m.Logger.Warn(fmt.Sprintf("The peering %q cannot be read, but it is mandatory: the operator is paused.", s.Name))
		toggles.Make("peering is forbidden", true)
	case len(r.objects) == 0:
	default:
		return true
	}
	return false
}

// lease returns what starts the Lease election (once; nothing without
// settings.Peering.Lease): the operator stands by until it holds it.
func (m *Member) lease(ctx context.Context, wg *sync.WaitGroup, toggles *Toggles, identity Identity, namespaces []string) func() {
	s := m.Settings
	if !s.Lease {
		return func() {}
	}
	fallback := ""
	if len(namespaces) > 0 {
		fallback = namespaces[0]
	}
	e := &Elector{
		Leases:    m.Leases,
		Namespace: LeaseNamespace(s.LeaseNamespace, fallback),
		Name:      LeaseName(s.LeaseName, s.Name, s.Priority),
		Identity:  identity,
		Timing:    leases.Timing{Duration: s.LeaseDuration, RenewDeadline: s.RenewDeadline, RetryPeriod: s.RetryPeriod},
		Logger:    m.Logger,
		OnLost:    m.OnLeaseLost,
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			e.Standby = toggles.Make("lease "+e.Namespace+"/"+e.Name, true)
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.Run(ctx)
			}()
		})
	}
}

// observe starts the observer and the keep-alive of one peering object.
// Seen, the object starts the Lease election; created after the start, it
// gets the operator's record at once, not at the next keep-alive.
func (m *Member) observe(ctx context.Context, wg *sync.WaitGroup, toggles *Toggles, identity Identity, o Object, startLease func(), unseen *Toggle) {
	s := m.Settings
	var joined sync.Once
	seen := func() {
		startLease()
		if !o.Exists {
			joined.Do(func() {
				if _, err := o.Touch(ctx, identity, s.Priority, s.Lifetime, s.Stealth); err != nil {
					m.Logger.Warn(fmt.Sprintf("The keep-alive in '%s' has failed: %v", s.Name, err))
				}
			})
		}
	}
	ob := &Observer{
		Object:    o,
		Identity:  identity,
		Priority:  s.Priority,
		Conflicts: toggles.Make(s.Name+"@"+o.Namespace, false),
		Lease:     s.Lease,
		Seen:      seen,
		Processed: func() { unseen.Set(false) },
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		ob.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		o.Keepalive(ctx, identity, s.Priority, s.Lifetime, s.Stealth)
	}()
}

// resolve finds the peering resources served, the namespaces of the
// peering objects, and which objects may be read (a Forbidden one is
// left out with a warning: the role lacks the rules of peering) and
// exist. Any other failure is an error, to retry.
func (m *Member) resolve(ctx context.Context, clusterwide bool) (r resolved, err error) {
	if r.gvrs, err = Resolve(m.Discovery, clusterwide); err != nil || len(r.gvrs) == 0 {
		return r, err
	}
	r.namespaces = []string{""}
	if !clusterwide {
		if r.namespaces, err = m.namespaces(ctx); apierrors.IsForbidden(err) {
			m.Logger.Warn(fmt.Sprintf("The peering is left out: %v", err))
			return resolved{gvrs: r.gvrs}, nil
		} else if err != nil {
			return resolved{}, err
		}
	}
	name := m.Settings.Name
	for _, gvr := range r.gvrs {
		for _, ns := range r.namespaces {
			o := Object{Client: m.Client.Resource(gvr), Namespace: ns, Name: name, Logger: m.Logger}
			ok, err := o.Get(ctx)
			if apierrors.IsForbidden(err) {
				m.Logger.Warn(fmt.Sprintf("The peering %q %s cannot be read, it is left out: %v", name, where(ns), err))
				continue
			}
			if err != nil {
				return resolved{}, fmt.Errorf("reading the peering %q %s: %w", name, where(ns), err)
			}
			r.found = r.found || ok
			o.Exists = ok
			r.objects = append(r.objects, o)
		}
	}
	return r, nil
}

func where(ns string) string {
	if ns == "" {
		return "cluster-wide"
	}
	return fmt.Sprintf("in '%s'", ns)
}

// namespaces are the namespaces of the KopfPeerings: the served ones
// given by name, or, for patterns, those that match at start.
func (m *Member) namespaces(ctx context.Context) ([]string, error) {
	if names, ok := m.Scope.ExactNamespaces(); ok {
		return names, nil
	}
	list, err := m.Client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the namespaces of the peering: %w", err)
	}
	var names []string
	for _, ns := range list.Items {
		if m.Scope.Matches(ns.GetName()) {
			names = append(names, ns.GetName())
		}
	}
	return names, nil
}
