package watching

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// Sharded list and watch (KEP-5866, alpha in Kubernetes 1.36 behind the
// ShardedListAndWatch feature gate): a list or watch request with a
// shardSelector gets only the objects whose hashed field is in its ranges,
// and a list's metadata.shardInfo.selector echoes the selector applied.
// An API server without the feature ignores the parameter (an unknown
// query parameter of a list is not an error), so the echo is the only way
// to tell.

// shardSelectorParam is the query parameter of ListOptions.ShardSelector
// (k8s.io/apimachinery 0.36), which the ListOptions of the client-go that
// this module builds with do not have: it is added to the requests by
// hand.
const shardSelectorParam = "shardSelector"

// listShardSelector returns a list's metadata.shardInfo.selector, and
// whether it has one.
func listShardSelector(list runtime.Object) (string, bool) {
	u, ok := list.(*unstructured.UnstructuredList)
	if !ok {
		return "", false
	}
	sel, ok, err := unstructured.NestedString(u.Object, "metadata", "shardInfo", "selector")
	return sel, ok && err == nil
}

// listsOnly is a ListerWatcher that client-go's reflector does not use in
// watch-list mode (a watch with sendInitialEvents instead of a LIST): its
// initial events carry no list metadata, so a sharded watcher could not
// tell whether the API server applied its shard selector.
type listsOnly struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported is what the reflector asks
// (watchlist.DoesClientNotSupportWatchListSemantics).
func (listsOnly) IsWatchListSemanticsUnSupported() bool { return true }

// shardedListing records whether a listing (or one page of it) was
// filtered by the watcher's ShardSelector, and logs it the first time
// and whenever it changes (an API server upgraded, or rolled back).
func (w *Watcher) shardedListing(list runtime.Object) {
	if w.ShardSelector == "" {
		return
	}
	echoed, ok := listShardSelector(list)
	sharded := ok && echoed == w.ShardSelector
	if !w.status.setSharded(sharded) || w.Logger == nil {
		return
	}
	switch {
	case sharded:
		w.Logger.Info(fmt.Sprintf("The API server applies the shard selector of the watch of %s: it sends only the objects of %s.", w.Name, w.ShardSelector))
	case ok:
		w.Logger.Warn(fmt.Sprintf("The API server applied another shard selector than the watch of %s asked for (%s): every object it sends is filtered here.", w.Name, echoed))
	default:
		w.Logger.Info(fmt.Sprintf("The API server ignored the shard selector of the watch of %s (sharded list and watch needs Kubernetes 1.36+ with the ShardedListAndWatch feature gate): it sends every object, and those of other shards are dropped here.", w.Name))
	}
}
