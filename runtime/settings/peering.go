package settings

import (
	"time"

	"github.com/kopf-go/kopf/runtime/leases"
)

// Peering says how the operator coordinates with the other operators that
// serve the same objects (Kopf's settings.peering; docs/peering.md): its
// record in a KopfPeering or ClusterKopfPeering object, and the Lease
// through which kopf-go replicas of equal priority elect the active one.
type Peering struct {
	// Identity is the operator's key in the peering object (Kopf's
	// identity= of kopf.run) and the Lease's holder; "": $POD_ID, else
	// user@host/YYYYmmddHHMMSS/xyz (see leases.DetectOwnID).
	Identity string
	// Name is the peering object's name (Kopf's settings.peering.name,
	// -P/--peering). Default: "default".
	Name string
	// Stealth: the keep-alives are not logged (Kopf's stealth). Pauses
	// and resumes are logged regardless. Default: false.
	Stealth bool
	// Priority is the operator's priority (Kopf's priority, -p, --dev
	// 666): operators pause while a live peer has a higher one. Default 0.
	Priority int
	// Lifetime is for how long the operator's keep-alive record is valid
	// (Kopf's lifetime, in whole seconds); it is renewed 5-10 s earlier.
	// Default: 60 s.
	Lifetime time.Duration
	// Mandatory: the peering object must exist; while it (or its CRD) is
	// missing, the operator stays paused (Kopf's mandatory, set by
	// -P/--peering). Default: false (no object: standalone).
	Mandatory bool
	// Standalone: no peering at all, even if the object exists (Kopf's
	// standalone, --standalone). Default: false.
	Standalone bool
	// Clusterwide: the peering is a ClusterKopfPeering, else a KopfPeering
	// per served namespace (Kopf's clusterwide). Nil: as the operator
	// serves: cluster-wide unless it serves namespaces given with -n.
	Clusterwide *bool

	// Lease turns on the election of one active replica among the kopf-go
	// operators of equal priority on the same peering object, through a
	// coordination.k8s.io Lease, instead of Kopf's "all freeze" (kopf-go's
	// own, docs/peering.md). Default: true.
	Lease bool
	// LeaseName is the Lease's name; "": "kopf-peering-<Name>-<Priority>"
	// (one Lease per priority; "m5" for -5).
	LeaseName string
	// LeaseNamespace is the Lease's namespace; "": $POD_NAMESPACE, else
	// the in-cluster service account's namespace, else the first served
	// namespace, else "default".
	LeaseNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod are the Lease's timing
	// (leases.Timing, client-go's leader election's): a stand-by replica
	// takes over at most about LeaseDuration+RetryPeriod after the active
	// one died; the active one pauses, and abandons its cycles in
	// progress, if it could not renew within RenewDeadline of its last
	// renewal's start (before another may take over: LeaseDuration).
	// Defaults: runtime/leases', 15 s, 10 s, 2 s.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

func defaultPeering() Peering {
	return Peering{
		Name:          "default",
		Lifetime:      60 * time.Second,
		Lease:         true,
		LeaseDuration: leases.DefaultDuration,
		RenewDeadline: leases.DefaultRenewDeadline,
		RetryPeriod:   leases.DefaultRetryPeriod,
	}
}
