package causes

// Activity is an operator-wide occasion for handlers that serve no object
// (Kopf's causes.Activity): the operator's start and stop, its login to the
// cluster, and its health probes. The values are Kopf's.
type Activity string

// The activities.
const (
	// ActivityStartup runs once, before the operator watches anything
	// (@kopf.on.startup).
	ActivityStartup Activity = "startup"
	// ActivityCleanup runs once, after the operator has stopped watching
	// (@kopf.on.cleanup).
	ActivityCleanup Activity = "cleanup"
	// ActivityAuthentication gets the cluster's credentials, at start and
	// again when the API server refuses them (@kopf.on.login).
	ActivityAuthentication Activity = "authentication"
	// ActivityProbe reports the operator's health, on each call of the
	// health endpoint (@kopf.on.probe).
	ActivityProbe Activity = "probe"
)
