package watching

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

const examplesPath = "/apis/kopf.dev/v1/namespaces/ns/kopfexamples"

var examplesResource = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// restClient is the operator's REST client (runtime/operator/clients.go).
func restClient(t *testing.T, host string) rest.Interface {
	t.Helper()
	return restClientFor(t, &rest.Config{Host: host})
}

func restClientFor(t *testing.T, base *rest.Config) rest.Interface {
	t.Helper()
	cfg := dynamic.ConfigFor(base)
	cfg.GroupVersion = nil
	cfg.APIPath = "/"
	c, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dynamicClient(t *testing.T, host string) dynamic.NamespaceableResourceInterface {
	t.Helper()
	c, err := dynamic.NewForConfig(&rest.Config{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	return c.Resource(examplesResource)
}

// recorder is an HTTP handler that records requests and answers with a
// function of them.
type recorder struct {
	mu       sync.Mutex
	requests []*http.Request
	respond  func(w http.ResponseWriter, r *http.Request)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.requests = append(rec.requests, r)
	rec.mu.Unlock()
	rec.respond(w, r)
}

func (rec *recorder) last() *http.Request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.requests[len(rec.requests)-1]
}

func writeJSON(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

// The requests are those of the dynamic client: path, query parameters,
// and JSON accepted.
func TestRequestsMatchDynamicClient(t *testing.T) {
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", "application/json")
			return // an empty watch
		}
		writeJSON(w, 200, list())
	}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	ctx := t.Context()
	tests := []metav1.ListOptions{
		{},
		{Limit: 500, ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
		{Limit: 500, Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ==", LabelSelector: "a=b,c!=d", FieldSelector: "metadata.name=x"},
		{AllowWatchBookmarks: true, SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, TimeoutSeconds: ptr.To[int64](377)},
		{ResourceVersion: "12345", AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](300)},
	}
	for _, opts := range tests {
		for _, watching := range []bool{false, true} {
			var want, got *http.Request
			if watching {
				w, err := dynamicClient(t, srv.URL).Namespace("ns").Watch(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				w.Stop()
				want = rec.last()
				if w, err = watchREST(ctx, restClient(t, srv.URL), examplesPath, opts, "", nil); err != nil {
					t.Fatal(err)
				}
				w.Stop()
				got = rec.last()
			} else {
				if _, err := dynamicClient(t, srv.URL).Namespace("ns").List(ctx, opts); err != nil {
					t.Fatal(err)
				}
				want = rec.last()
				if _, err := listREST(ctx, restClient(t, srv.URL), examplesPath, opts, ""); err != nil {
					t.Fatal(err)
				}
				got = rec.last()
			}
			if got.Method != want.Method || got.URL.Path != want.URL.Path || !reflect.DeepEqual(got.URL.Query(), want.URL.Query()) {
				t.Errorf("%s %s, the dynamic client's %s %s", got.Method, got.URL, want.Method, want.URL)
			}
			if a := got.Header.Get("Accept"); a != "application/json" {
				t.Errorf("accepts %q", a)
			}
		}
	}
}

// API errors are StatusErrors, as from the dynamic client.
func TestRequestErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 410, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The provided continue parameter is too old","reason":"Expired","code":410}`)
	}))
	defer srv.Close()
	c := restClient(t, srv.URL)
	if _, err := listREST(t.Context(), c, examplesPath, metav1.ListOptions{}, ""); !apierrors.IsResourceExpired(err) {
		t.Errorf("list: %v", err)
	}
	if _, err := watchREST(t.Context(), c, examplesPath, metav1.ListOptions{}, "", nil); !apierrors.IsResourceExpired(err) {
		t.Errorf("watch: %v", err)
	}
}

// Watches are not rate-limited, as with client-go; lists are.
func TestWatchesAreNotThrottled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			writeJSON(w, 200, "")
		} else {
			writeJSON(w, 200, list())
		}
	}))
	defer srv.Close()
	c := restClientFor(t, &rest.Config{Host: srv.URL, QPS: 0.001, Burst: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for range 3 {
		w, err := watchREST(ctx, c, examplesPath, metav1.ListOptions{}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		w.Stop()
	}
	if _, err := listREST(ctx, c, examplesPath, metav1.ListOptions{}, ""); err != nil {
		t.Fatal(err) // the burst
	}
	if _, err := listREST(ctx, c, examplesPath, metav1.ListOptions{}, ""); err == nil || !strings.Contains(err.Error(), "rate limiter") {
		t.Errorf("a list is not rate-limited: %v", err)
	}
}

// A watch delivers the server's events and ends when the server ends it,
// when it is stopped, and when its context is done.
func TestWatchEnds(t *testing.T) {
	type ending struct {
		name string
		stop func(w watch.Interface, cancel context.CancelFunc, serverDone chan struct{})
	}
	endings := []ending{
		{"server", func(watch.Interface, context.CancelFunc, chan struct{}) {}},
		{"stop", func(w watch.Interface, _ context.CancelFunc, _ chan struct{}) { w.Stop() }},
		{"context", func(_ watch.Interface, cancel context.CancelFunc, _ chan struct{}) { cancel() }},
	}
	for _, e := range endings {
		t.Run(e.name, func(t *testing.T) {
			serverDone := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(frame("ADDED", kopfExample("a", "1"))))
				w.(http.Flusher).Flush()
				if e.name != "server" {
					<-r.Context().Done() // until the client goes
				}
				close(serverDone)
			}))
			defer srv.Close()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			w, err := watchREST(ctx, restClient(t, srv.URL), examplesPath, metav1.ListOptions{}, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			ev := <-w.ResultChan()
			if u, ok := ev.Object.(*unstructured.Unstructured); ev.Type != watch.Added || !ok || u.GetName() != "a" {
				t.Fatalf("first event: %v %#v", ev.Type, ev.Object)
			}
			e.stop(w, cancel, serverDone)
			timeout := time.After(10 * time.Second)
			for open := true; open; {
				select {
				case ev, ok := <-w.ResultChan():
					open = ok
					if ok && ev.Type != watch.Error { // a cancelled read is reported, as by client-go
						t.Errorf("an event after the end: %v", ev)
					}
				case <-timeout:
					t.Fatal("the watch does not end")
				}
			}
			select {
			case <-serverDone:
			case <-timeout:
				t.Fatal("the request is not closed")
			}
			w.Stop()
		})
	}
}

// The watcher lists by streaming (client-go's watch-list, which the
// reflector uses by default) through REST, and relists when the server says
// that the watch is too old: an ERROR event with a 410 Status.
func TestWatcherOverREST(t *testing.T) {
	var (
		mu      sync.Mutex
		streams int
	)
	initialEnd := func(rv string) string {
		return frame("BOOKMARK", `{"kind":"KopfExample","apiVersion":"kopf.dev/v1","metadata":{"resourceVersion":"`+rv+`","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}`)
	}
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("watch") != "true" {
			writeJSON(w, 500, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no listing expected","code":500}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		mu.Lock()
		streams++
		n := streams
		mu.Unlock()
		switch {
		case n == 1 && q.Get("sendInitialEvents") == "true":
			_, _ = fmt.Fprint(w, frame("ADDED", kopfExample("a", "1"))+frame("ADDED", kopfExample("b", "2"))+initialEnd("10"))
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
			_, _ = fmt.Fprint(w, frame("MODIFIED", kopfExample("a", "11")))
			_, _ = fmt.Fprint(w, frame("ERROR", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 11 (20)","reason":"Expired","code":410}`))
		case n > 1 && q.Get("sendInitialEvents") == "true":
			_, _ = fmt.Fprint(w, frame("ADDED", kopfExample("a", "21"))+initialEnd("21"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			writeJSON(w, 500, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"unexpected request `+r.URL.String()+`","code":500}`)
		}
	}}
	srv := httptest.NewServer(rec)
	defer srv.Close()

	events := make(chan Event, 100)
	ctx, cancel := context.WithCancel(t.Context())
	w := &Watcher{REST: restClient(t, srv.URL), Path: examplesPath, Callback: func(ev Event) { events <- ev }, Name: "test"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	type seen struct {
		Type    Type
		Key, RV string
		Initial bool
	}
	var got []seen
	timeout := time.After(20 * time.Second)
	for len(got) < 5 {
		select {
		case ev := <-events:
			got = append(got, seen{ev.Type, ev.Key, ev.Object.Meta().ResourceVersion(), ev.Initial})
			if _, ok := ev.Object.Meta()["managedFields"]; ok {
				t.Errorf("managedFields are delivered")
			}
		case <-timeout:
			t.Fatalf("events so far: %+v; requests: %d", got, len(rec.requests))
		}
	}
	cancel()
	<-done
	if got[0].Key > got[1].Key { // a listing comes in no particular order
		got[0], got[1] = got[1], got[0]
	}
	want := []seen{
		{Listed, "default/a", "1", true}, {Listed, "default/b", "2", true},
		{Modified, "default/a", "11", false},
		{Listed, "default/a", "21", false}, {Deleted, "default/b", "", false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events\n%+v\nwant\n%+v", got, want)
	}
}

// When the server does not stream listings, the watcher lists in pages
// (limit and continue) and watches from the list's resourceVersion; every
// request carries the watcher's selectors.
func TestWatcherListsInPages(t *testing.T) {
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case q.Get("sendInitialEvents") == "true":
			writeJSON(w, 400, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"not supported","reason":"BadRequest","code":400}`)
		case q.Get("watch") != "true" && q.Get("limit") != "" && q.Get("continue") == "":
			writeJSON(w, 200, `{"apiVersion":"kopf.dev/v1","kind":"KopfExampleList","metadata":{"resourceVersion":"42","continue":"page2"},"items":[`+kopfExample("a", "1")+`]}`)
		case q.Get("watch") != "true" && q.Get("continue") == "page2":
			writeJSON(w, 200, `{"apiVersion":"kopf.dev/v1","kind":"KopfExampleList","metadata":{"resourceVersion":"42"},"items":[`+kopfExample("b", "2")+`]}`)
		case q.Get("watch") == "true" && q.Get("resourceVersion") == "42":
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, frame("DELETED", kopfExample("a", "43")))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			writeJSON(w, 500, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"unexpected request","code":500}`)
		}
	}}
	srv := httptest.NewServer(rec)
	defer srv.Close()

	events := make(chan Event, 100)
	ctx, cancel := context.WithCancel(t.Context())
	w := &Watcher{REST: restClient(t, srv.URL), Path: examplesPath, Callback: func(ev Event) { events <- ev }, Name: "test",
		LabelSelector: "app=x", FieldSelector: "metadata.name!=z"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	got := map[string]Type{}
	timeout := time.After(20 * time.Second)
	for len(got) < 3 {
		select {
		case ev := <-events:
			got[ev.Key+"@"+ev.Object.Meta().ResourceVersion()] = ev.Type
		case <-timeout:
			t.Fatalf("events so far: %v", got)
		}
	}
	cancel()
	<-done
	want := map[string]Type{"default/a@1": Listed, "default/b@2": Listed, "default/a@43": Deleted}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range rec.requests {
		if q := r.URL.Query(); q.Get("labelSelector") != "app=x" || q.Get("fieldSelector") != "metadata.name!=z" {
			t.Errorf("a request without the selectors: %s", r.URL)
		}
	}
}

// A watch request that the server does not answer (it accepted the
// connection and stopped) is abandoned after the inactivity timeout, with
// ErrNoResponse as the failure and as its context's cause (which
// runtime/apiserver's Health counts as the server's), whether the watcher
// sends it through REST or the dynamic client.
func TestUnansweredWatchIsAbandoned(t *testing.T) {
	for _, overREST := range []bool{true, false} {
		t.Run(fmt.Sprintf("REST=%v", overREST), func(t *testing.T) {
			abandoned := make(chan error, 10)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done() // no response, not even its headers
			}))
			defer srv.Close()
			causes := make(chan error, 10)
			cfg := &rest.Config{Host: srv.URL, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
				return roundTripper(func(req *http.Request) (*http.Response, error) {
					resp, err := rt.RoundTrip(req)
					if err != nil {
						causes <- context.Cause(req.Context())
					}
					return resp, err
				})
			}}
			w := &Watcher{Name: "test", InactivityTimeout: 100 * time.Millisecond, OnError: func(err error) { abandoned <- err }}
			if overREST {
				w.REST, w.Path = restClientFor(t, cfg), examplesPath
			} else {
				c, err := dynamic.NewForConfig(cfg)
				if err != nil {
					t.Fatal(err)
				}
				w.Client = c.Resource(examplesResource)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				w.Run(ctx)
			}()
			defer func() { cancel(); <-done }()
			for _, got := range []chan error{abandoned, causes} {
				select {
				case err := <-got:
					if !errors.Is(err, ErrNoResponse) || !strings.Contains(err.Error(), "no response within 100ms") {
						t.Errorf("the request ends with %v, want %v", err, ErrNoResponse)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the unanswered request is not abandoned")
				}
			}
			if s := w.Status(); s.Failures == 0 || !errors.Is(s.LastError, ErrNoResponse) {
				t.Errorf("status: %+v", s)
			}
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
