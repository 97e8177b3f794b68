package markers

// OnReconcile is the marker of reconcile handlers (level-triggered, as
// controller-runtime's Reconcile): called with the current object whenever
// it or an object it owns or watches changes, at start and at a resync
// interval, with no cause and no diff (runtime/registry.ReconcileHandler).
const OnReconcile = "on.reconcile"

// reconcileDefinition is the definition of on.reconcile: the identity
// options, the resources whose changes re-run the owner (owns=, watches=
// with map=), its timing (resync=, backoff=), finalize= and the filters
// of on.event without field= and value= (a reconciler sees the whole
// object).
func reconcileDefinition() Definition {
	filters := filterArgs(reconcileHandler)[:3] // labels, annotations, when
	ids := idArgs("the function's name in Kopf's spelling: ReconcileMemcached → reconcile_memcached")
	ids[0].Doc = "the handler's id: its name in the log and metrics; unique per resource among the reconcile handlers"
	return Definition{
		Name:       OnReconcile,
		Targets:    TargetFunc,
		Summary:    "reconcile the objects of a resource, level-triggered (controller-runtime's Reconcile): the function gets the current object whenever it changes, at start, every resync=, and when an object it owns or watches changes (status included); it returns an optional requeue-after, errors are retried with backoff, nothing is persisted; with finalize=true it also sees deletions (kw.Deleting) through a finalizer",
		Positional: []Arg{resourceArg()},
		Args: concat(ids, []Arg{
			{Name: "owns", Type: TypeResources, Positive: true, Default: "none",
				Doc: "the children's resources (controller-runtime's Owns): a change of a child (status included) re-runs its owner, found by the child's controller ownerReference (kopf.Adopt sets it); one resource or a list [r1, r2]"},
			{Name: "watches", Type: TypeResources, Positive: true, Default: "none",
				Doc: "other resources whose changes re-run objects (controller-runtime's Watches): those map= returns, or without map= the owners in their ownerReferences, as owns=; one resource or a list [r1, r2]"},
			{Name: "map", Type: TypeFunc, Default: "none (by ownerReferences)",
				Doc: "with watches=: a function of the package func(ctx context.Context, obj kopf.Body) []types.NamespacedName (k8s.io/apimachinery/pkg/types) naming the objects to reconcile for a changed watched object"},
			{Name: "resync", Type: TypeDuration, Positive: true, Default: "none (only on changes)",
				Doc: "also reconcile every object this long after its last reconciliation"},
			{Name: "finalize", Type: TypeBool, Default: "false",
				Doc: "hold a finalizer (Kopf's) on the objects, so that the function sees their deletion (kw.Deleting) and the deletion completes when it succeeds"},
			{Name: "backoff", Type: TypeDuration, Positive: true, Default: "1s",
				Doc: "the delay before the first retry after an error, doubled on every further error up to 5m; a success resets it"},
		}, filters),
	}
}
