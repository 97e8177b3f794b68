package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
)

// view is the part of a KopfExample the watcher needs.
type view struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
		Annotations     struct {
			LastHandled string `json:"kopf.zalando.org/last-handled-configuration"`
		} `json:"annotations"`
	} `json:"metadata"`
	Status struct {
		CreateFn struct {
			Message string `json:"message"`
		} `json:"create_fn"`
		UpdateFn struct {
			Value any `json:"value"`
		} `json:"update_fn"`
	} `json:"status"`
}

// watcher watches the KopfExamples of one namespace and records, for each
// object, when it was first seen with the creation result and with the
// update result (status.update_fn.value == updateValue); and, for the
// contenders that also write kopf-go's diff-base annotation (kopf-go and
// the ceiling), when it carried both the result and the annotation that
// goes with it: with the status subresource these are two writes, and the
// object is done only when both are in.
type watcher struct {
	api         *api
	ns          string
	updateValue string

	mu          sync.Mutex
	created     map[string]time.Time
	updated     map[string]time.Time
	createdFull map[string]time.Time
	updatedFull map[string]time.Time
	changed     chan struct{}
	cancel      context.CancelFunc
	done        chan struct{}
}

func startWatcher(a *api, ns, updateValue string) (*watcher, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{api: a, ns: ns, updateValue: updateValue, created: map[string]time.Time{}, updated: map[string]time.Time{},
		createdFull: map[string]time.Time{}, updatedFull: map[string]time.Time{},
		changed: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	rv, err := w.list(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	go w.run(ctx, rv)
	return w, nil
}

func (w *watcher) stop() {
	w.cancel()
	<-w.done
}

func (w *watcher) observe(v *view, now time.Time) {
	name := v.Metadata.Name
	base := v.Metadata.Annotations.LastHandled
	w.mu.Lock()
	fresh := false
	first := func(m map[string]time.Time) {
		if _, ok := m[name]; !ok {
			m[name] = now
			fresh = true
		}
	}
	if v.Status.CreateFn.Message == "hello world" {
		first(w.created)
		if base != "" {
			first(w.createdFull)
		}
	}
	if s, ok := v.Status.UpdateFn.Value.(string); ok && s == w.updateValue {
		first(w.updated)
		if strings.Contains(base, `"value":"`+w.updateValue+`"`) {
			first(w.updatedFull)
		}
	}
	w.mu.Unlock()
	if fresh {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
}

func (w *watcher) list(ctx context.Context) (string, error) {
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []view `json:"items"`
	}
	if err := w.api.call(ctx, "LIST", "GET", fmt.Sprintf(objectsPath, w.ns), nil, "", nil, &list); err != nil {
		return "", err
	}
	now := time.Now()
	for i := range list.Items {
		w.observe(&list.Items[i], now)
	}
	return list.Metadata.ResourceVersion, nil
}

func (w *watcher) run(ctx context.Context, rv string) {
	defer close(w.done)
	for ctx.Err() == nil {
		next, err := w.watch(ctx, rv)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errGone):
			if next, err = w.list(ctx); err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		case err != nil:
			time.Sleep(100 * time.Millisecond)
		}
		rv = next
	}
}

var errGone = errors.New("resource version expired")

func (w *watcher) watch(ctx context.Context, rv string) (string, error) {
	q := url.Values{"watch": {"true"}, "resourceVersion": {rv}, "allowWatchBookmarks": {"true"}, "timeoutSeconds": {"3600"}}
	// Counted when it ends, as the API server counts watches.
	defer w.api.count("WATCH", "kopfexamples")
	resp, err := w.api.do(ctx, "GET", fmt.Sprintf(objectsPath, w.ns), q, "", nil)
	if err != nil {
		return rv, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == 410 {
		return rv, errGone
	}
	if resp.StatusCode >= 300 {
		return rv, fmt.Errorf("watch: %s", resp.Status)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return rv, err
		}
		now := time.Now()
		if ev.Type == "ERROR" {
			var st struct {
				Code int `json:"code"`
			}
			_ = json.Unmarshal(ev.Object, &st)
			if st.Code == 410 {
				return rv, errGone
			}
			return rv, fmt.Errorf("watch error: %s", ev.Object)
		}
		var v view
		if err := json.Unmarshal(ev.Object, &v); err != nil {
			return rv, err
		}
		rv = v.Metadata.ResourceVersion
		if ev.Type == "ADDED" || ev.Type == "MODIFIED" {
			w.observe(&v, now)
		}
	}
}

// counts returns how many objects carry each result.
func (w *watcher) counts() (created, updated int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.created), len(w.updated)
}

// waitFor waits until at least n objects carry the result (update: the
// update result; full: with the diff-base annotation too), or the deadline
// passes. It returns the time the n-th was seen, or an error with the
// count reached.
func (w *watcher) waitFor(n int, update, full bool, deadline time.Time) (time.Time, error) {
	for {
		w.mu.Lock()
		m := w.created
		switch {
		case update && full:
			m = w.updatedFull
		case update:
			m = w.updated
		case full:
			m = w.createdFull
		}
		got := len(m)
		var last time.Time
		if got >= n {
			for _, t := range m {
				if t.After(last) {
					last = t
				}
			}
		}
		w.mu.Unlock()
		if got >= n {
			return last, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return time.Time{}, fmt.Errorf("%d of %d objects done when the time was up", got, n)
		}
		select {
		case <-w.changed:
		case <-time.After(min(left, time.Second)):
		}
	}
}

// seenAt returns when the object was first seen with its creation result
// (full: with the diff-base annotation too, i.e. with both writes in).
func (w *watcher) seenAt(name string, full bool) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.created
	if full {
		m = w.createdFull
	}
	t, ok := m[name]
	return t, ok
}
