package clusters

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
)

// engaged is what a provider of a source (a directory, Secrets) has
// engaged on its sink, by cluster name: the version (a hash of the
// source's content) each cluster was engaged with. sync brings the sink to
// a wanted state: it disengages what is no longer wanted, and engages what
// is new or of another version; a failed Engage or Disengage is logged and
// tried again at the next sync. It is used from one goroutine.
type engaged struct {
	sink     Sink
	logger   *slog.Logger
	versions map[string]string
}

// wanted is a cluster that a source yields now, of a version.
type wanted struct {
	cluster Cluster
	version string
}

func newEngaged(sink Sink, logger *slog.Logger) *engaged {
	return &engaged{sink: sink, logger: logger, versions: map[string]string{}}
}

// version is the version the named cluster is engaged with ("" if not).
func (e *engaged) version(name string) (string, bool) {
	v, ok := e.versions[name]
	return v, ok
}

// sync disengages the clusters not in want, then engages those of want
// not engaged with their version, in the order of their names. A wanted
// entry with the version engaged already (a source that is unreadable now
// keeps its cluster as it was) is left alone.
func (e *engaged) sync(ctx context.Context, want map[string]wanted) {
	for _, name := range sortedKeys(e.versions) {
		if _, ok := want[name]; ok || ctx.Err() != nil {
			continue
		}
		if err := e.sink.Disengage(ctx, name); err != nil {
			e.logger.Error(fmt.Sprintf("Cluster %s could not be disengaged: %v", name, err))
			continue
		}
		e.logger.Info(fmt.Sprintf("Cluster %s is gone: disengaged.", name))
		delete(e.versions, name)
	}
	for _, name := range sortedKeys(want) {
		w := want[name]
		if v, ok := e.versions[name]; (ok && v == w.version) || ctx.Err() != nil {
			continue
		}
		if err := e.sink.Engage(ctx, w.cluster); err != nil {
			e.logger.Error(fmt.Sprintf("Cluster %s could not be engaged: %v", name, err))
			continue
		}
		_, again := e.versions[name]
		e.versions[name] = w.version
		if again {
			e.logger.Info(fmt.Sprintf("Cluster %s has changed: engaged again.", name))
		} else {
			e.logger.Info(fmt.Sprintf("Cluster %s is engaged.", name))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
