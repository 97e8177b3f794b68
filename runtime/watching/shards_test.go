package watching

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const testShardSelector = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"

// The shard selector is one more query parameter of the dynamic client's
// requests, and none when it is "".
func TestShardSelectorParameter(t *testing.T) {
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
	opts := metav1.ListOptions{Limit: 500, ResourceVersion: "0", LabelSelector: "a=b"}
	for _, shard := range []string{"", testShardSelector} {
		for _, watching := range []bool{false, true} {
			var want, got *http.Request
			if watching {
				w, err := dynamicClient(t, srv.URL).Namespace("ns").Watch(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				w.Stop()
				want = rec.last()
				if w, err = watchREST(ctx, restClient(t, srv.URL), examplesPath, opts, shard, nil); err != nil {
					t.Fatal(err)
				}
				w.Stop()
				got = rec.last()
			} else {
				if _, err := dynamicClient(t, srv.URL).Namespace("ns").List(ctx, opts); err != nil {
					t.Fatal(err)
				}
				want = rec.last()
				if _, err := listREST(ctx, restClient(t, srv.URL), examplesPath, opts, shard); err != nil {
					t.Fatal(err)
				}
				got = rec.last()
			}
			q := want.URL.Query()
			if shard != "" {
				q.Set("shardSelector", shard)
			}
			if !reflect.DeepEqual(got.URL.Query(), q) {
				t.Errorf("watch=%v, shard %q: %s, want the query %v", watching, shard, got.URL, q)
			}
		}
	}
}

// A list's metadata.shardInfo.selector is read from the list as decoded:
// testdata/sharded-list.json is kube-apiserver 1.36's answer to a LIST
// with a shardSelector, with the ShardedListAndWatch gate on.
func TestListShardSelector(t *testing.T) {
	recorded, err := os.ReadFile("testdata/sharded-list.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		json   string
		want   string
		wantOK bool
	}{
		{"recorded from kube-apiserver 1.36", string(recorded), testShardSelector, true},
		{"no shardInfo", list(kopfExample("a", "1")), "", false},
		{"null shardInfo", `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"shardInfo":null},"items":[]}`, "", false},
		{"a selector that is not a string", `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"shardInfo":{"selector":1}},"items":[]}`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := decodeList([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := listShardSelector(l); got != tt.want || ok != tt.wantOK {
				t.Errorf("listShardSelector = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	if _, ok := listShardSelector(nil); ok {
		t.Error("a nil list has a shard selector")
	}
	// The API server sent only the objects whose uid hashes below 2^63.
	l, err := decodeList(recorded)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) == 0 {
		t.Fatal("the recorded list has no items")
	}
	for _, item := range l.Items {
		h := fnv.New64a()
		h.Write([]byte(item.GetUID()))
		if h.Sum64() >= 1<<63 {
			t.Errorf("%s: its uid hashes to %#x, outside the selector", item.GetName(), h.Sum64())
		}
	}
}

// A watcher with a shard selector lists with LIST (not a streamed
// watch-list, whose events carry no list metadata), sends the selector
// with every request, is Sharded when the list echoes it, and says once
// which it is.
func TestShardedWatcher(t *testing.T) {
	tests := []struct {
		name    string
		echo    string // the list's metadata.shardInfo, "" for none
		sharded bool
		logged  string
	}{
		{"applied", fmt.Sprintf(`,"shardInfo":{"selector":%q}`, testShardSelector), true,
			"level=INFO msg=\"The API server applies the shard selector of the watch of test: it sends only the objects of " + testShardSelector + ".\"\n"},
		{"ignored", "", false,
			"level=INFO msg=\"The API server ignored the shard selector of the watch of test (sharded list and watch needs Kubernetes 1.36+ with the ShardedListAndWatch feature gate): it sends every object, and those of other shards are dropped here.\"\n"},
		{"another", `,"shardInfo":{"selector":"shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"}`, false,
			"level=WARN msg=\"The API server applied another shard selector than the watch of test asked for (shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')): every object it sends is filtered here.\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, rec, logged := runShardedWatcher(t, tt.echo)
			s := await(t, w, "listed and watching", func(s Status) bool { return s.Watching && !s.Listed.IsZero() })
			if s.Sharded != tt.sharded {
				t.Errorf("Sharded = %v, want %v", s.Sharded, tt.sharded)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for _, r := range rec.requests {
				if q := r.URL.Query(); q.Get("shardSelector") != testShardSelector || q.Get("sendInitialEvents") != "" {
					t.Errorf("a request %s", r.URL)
				}
			}
			if got := logged(); got != tt.logged {
				t.Errorf("logged\n%s\nwant\n%s", got, tt.logged)
			}
		})
	}
}

// runShardedWatcher runs a Watcher with testShardSelector against a server
// whose lists have echo in their metadata and whose watches stay open, and
// returns the watcher, the server's requests and what it logged so far.
func runShardedWatcher(t *testing.T, echo string) (*Watcher, *recorder, func() string) {
	t.Helper()
	rec := &recorder{respond: func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			writeJSON(w, 200, `{"apiVersion":"kopf.dev/v1","kind":"KopfExampleList","metadata":{"resourceVersion":"1"`+echo+`},"items":[`+kopfExample("a", "1")+`]}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}}
	srv := httptest.NewServer(rec)
	var mu sync.Mutex
	var buf bytes.Buffer
	h := slog.NewTextHandler(&lockedWriter{mu: &mu, w: &buf}, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	ctx, cancel := context.WithCancel(t.Context())
	w := &Watcher{REST: restClient(t, srv.URL), Path: examplesPath, Callback: func(Event) {}, Name: "test",
		ShardSelector: testShardSelector, Logger: slog.New(h)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
	})
	return w, rec, func() string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, line := range strings.SplitAfter(buf.String(), "\n") {
			if strings.Contains(line, "shard selector") {
				out = append(out, line)
			}
		}
		return strings.Join(out, "")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
