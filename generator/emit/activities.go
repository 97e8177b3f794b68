package emit

import "github.com/kopf-go/kopf/runtime/causes"

// Activity handlers are registered with AddActivity:
//
//	r.AddActivity(kopf.ActivityHandler{
//		ID:       "startup_fn",
//		Activity: kopf.ActivityStartup,
//		Fn:       kopf.ActivityFunc(kopf.NoResult(StartupFn)),
//	})
//
// login handlers with kopf.LoginFunc(F), whose F returns
// (*kopf.ConnectionInfo, error).

// activityConst returns the facade's name of an activity.
func activityConst(a causes.Activity) (string, bool) {
	switch a {
	case causes.ActivityStartup:
		return "ActivityStartup", true
	case causes.ActivityCleanup:
		return "ActivityCleanup", true
	case causes.ActivityAuthentication:
		return "ActivityAuthentication", true
	case causes.ActivityProbe:
		return "ActivityProbe", true
	}
	return "", false
}
