package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"

	"github.com/kopf-go/kopf/runtime/apiserver"
	"github.com/kopf-go/kopf/runtime/resources"
)

// serveResources resolves the registry's selectors and starts a pipeline
// for each resource found, looking the unresolved ones up again until all
// are resolved (the operator is then ready once every watch has listed),
// then waits for ctx. Its error is a selector that cannot be resolved.
func (o *operator) serveResources(ctx context.Context) error {
	pending := o.reg.Selectors()
	s := &rescan{o: o, served: map[string]bool{}, log: apiserver.LogBackoff{MaxSilence: o.opts.Settings.Watching.InactivityTimeout}}
	s.resetRetry()
	for len(pending) > 0 {
		var err error
		pending, err = s.serve(ctx, pending)
		if o.indexed != nil && !errors.As(err, new(*discoveryError)) {
			o.indexed.seal() // the watches of the indexed resources found are started
		}
		delay, err := s.delay(ctx, pending, err)
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
	o.ready.allResolved()
	<-ctx.Done()
	return nil
}

// rescan is the state of serveResources: the resources served, and the
// pacing of the lookups and of their reports.
type rescan struct {
	o      *operator
	served map[string]bool
	retry  wait.Backoff
	log    apiserver.LogBackoff
}

// resetRetry starts the lookups' backoff again: while discovery fails, it
// is retried after 1, 2, 4... seconds, up to Options.RescanInterval.
func (s *rescan) resetRetry() {
	s.retry = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: s.o.opts.RescanInterval}
}

// delay says when to look the pending selectors up again after a pass
// that ended with err, and logs why. The "Unresolved resources" hint is
// given only when discovery succeeded and the resources are not there.
func (s *rescan) delay(ctx context.Context, pending []resources.Selector, err error) (time.Duration, error) {
	o := s.o
	var derr *discoveryError
	switch {
	case errors.As(err, &derr):
		delay := s.retry.Step()
		level := slog.LevelDebug // unreachable: apiserver.Health says so
		var status apierrors.APIStatus
		if errors.As(err, &status) && !apierrors.IsUnauthorized(err) && s.log.Due(time.Now()) {
			level = slog.LevelWarn
		}
		o.logger.Log(context.Background(), level, fmt.Sprintf("The resources of the API server %s cannot be discovered: %v; retrying in %s seconds.", o.server, derr.err, seconds(delay)))
		return delay, nil
	case err != nil:
		return 0, err
	case len(pending) == 0:
		return 0, nil
	case !serverReady(ctx, o.discovery):
		// A starting API server serves discovery before it has loaded
		// the CRDs: their absence means nothing yet.
		delay := s.retry.Step()
		o.logger.Debug(fmt.Sprintf("The API server %s is not ready; resolving the resources again in %s seconds.", o.server, seconds(delay)))
		return delay, nil
	}
	s.resetRetry()
	s.log.Recovered()
	names := make([]string, len(pending))
	for i, sel := range pending {
		names[i] = sel.String()
	}
	o.logger.Warn("Unresolved resources cannot be served (try creating their CRDs): " + strings.Join(names, ", "))
	return o.opts.RescanInterval, nil
}

// serve resolves the selectors and starts serving the resolved ones. It
// returns the selectors that are not resolvable yet: all of them, with a
// *discoveryError, if the API server's resources cannot be discovered.
// Each resource is served once, however many selectors name it: its
// reactor runs the handlers of every selector that matches it.
func (s *rescan) serve(ctx context.Context, selectors []resources.Selector) ([]resources.Selector, error) {
	all, err := resources.Discover(s.o.discovery)
	if err != nil {
		return selectors, &discoveryError{err}
	}
	var pending []resources.Selector
	for _, sel := range selectors {
		if sel.IsEverything() {
			// Resources that appear later (new CRDs) are not picked up
			// until the operator restarts.
			for _, res := range resources.ResolveAll(all, sel) {
				s.serveOnce(ctx, res)
			}
			continue
		}
		res, err := resources.Resolve(all, sel)
		if errors.Is(err, resources.ErrNotFound) {
			pending = append(pending, sel)
			continue
		}
		if err != nil {
			return nil, err
		}
		s.serveOnce(ctx, res)
	}
	return pending, nil
}

func (s *rescan) serveOnce(ctx context.Context, res resources.Resource) {
	if !s.served[res.String()] {
		s.served[res.String()] = true
		s.o.newPipeline(ctx, res)
	}
}

// serverReady tells whether the API server says it is ready (GET
// /readyz), or cannot say it (the operator may not read /readyz).
func serverReady(ctx context.Context, dc discovery.DiscoveryInterface) bool {
	var code int
	err := dc.RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code).Error()
	return err == nil || code == http.StatusUnauthorized || code == http.StatusForbidden || code == http.StatusNotFound
}

// discoveryError is a failure to list the API server's resources: nothing
// can be said yet about whether the selected resources exist.
type discoveryError struct{ err error }

func (e *discoveryError) Error() string { return e.err.Error() }
func (e *discoveryError) Unwrap() error { return e.err }

// seconds formats a duration as seconds to a tenth (apiserver.Seconds).
func seconds(d time.Duration) string { return apiserver.Seconds(d) }
