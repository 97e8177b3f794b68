package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// api is the harness's own minimal client of the API server: raw HTTP
// with JSON decoded into small structs (the harness shares the CPU with
// the contenders, so it spends as little as it can), and a count of its
// own requests by verb (named as apiserver_request_total names them), to
// subtract from the API server's counts.
type api struct {
	host string
	http *http.Client

	mu     sync.Mutex
	counts map[string]int // "VERB resource[/sub]" → requests
}

func newAPI(cfg *rest.Config) (*api, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	hc.Timeout = 0
	return &api{host: strings.TrimSuffix(cfg.Host, "/"), http: hc, counts: map[string]int{}}, nil
}

func (a *api) count(verb, resource string) {
	a.mu.Lock()
	a.counts[verb+" "+resource]++
	a.mu.Unlock()
}

// snapshot returns a copy of the harness's request counts.
func (a *api) snapshot() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int, len(a.counts))
	for k, v := range a.counts {
		out[k] = v
	}
	return out
}

const objectsPath = "/apis/kopf.dev/v1/namespaces/%s/kopfexamples"

func (a *api) do(ctx context.Context, method, path string, query url.Values, contentType string, body []byte) (*http.Response, error) {
	u := a.host + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return a.http.Do(req)
}

func (a *api) call(ctx context.Context, verb, method, path string, query url.Values, contentType string, body []byte, out any) error {
	if strings.Contains(path, "/kopfexamples") {
		a.count(verb, "kopfexamples")
	}
	resp, err := a.do(ctx, method, path, query, contentType, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return &statusError{code: resp.StatusCode, msg: fmt.Sprintf("%s %s: %s: %s", method, path, resp.Status, msg)}
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

func (a *api) createNamespace(ctx context.Context, name string) error {
	body, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}})
	return a.call(ctx, "POST", "POST", "/api/v1/namespaces", nil, "application/json", body, nil)
}

// objectBody is a small KopfExample, as examples/obj.yaml without labels
// and annotations.
func objectBody(ns, name string) []byte {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "kopf.dev/v1",
		"kind":       "KopfExample",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"duration": "1m", "field": "value", "items": []string{"item1", "item2"}},
	})
	return body
}

func (a *api) create(ctx context.Context, ns, name string) error {
	return a.call(ctx, "POST", "POST", fmt.Sprintf(objectsPath, ns), nil, "application/json", objectBody(ns, name), nil)
}

func (a *api) patchSpecValue(ctx context.Context, ns, name, value string) error {
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"value": value}})
	return a.call(ctx, "PATCH", "PATCH", fmt.Sprintf(objectsPath, ns)+"/"+name, nil, "application/merge-patch+json", body, nil)
}

// deleteAll deletes every KopfExample of the namespace and waits until
// none is left anywhere (the contenders watch all namespaces).
func (a *api) deleteAll(ctx context.Context, ns string) error {
	if err := a.call(ctx, "DELETECOLLECTION", "DELETE", fmt.Sprintf(objectsPath, ns), nil, "", nil, nil); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		q := url.Values{"limit": {"1"}}
		if err := a.call(ctx, "LIST", "GET", "/apis/kopf.dev/v1/kopfexamples", q, "", nil, &list); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("objects of %s are still there after 10 minutes", ns)
}

// serverCounts reads kube-apiserver's apiserver_request_total for the
// resources the contenders touch, summed by "VERB resource[/sub]".
func (a *api) serverCounts(ctx context.Context) (map[string]int, error) {
	resp, err := a.do(ctx, "GET", "/metrics", nil, "", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		metric, rest, ok := strings.Cut(line, "{")
		if !ok || (metric != "apiserver_request_total" && metric != "apiserver_terminated_watchers_total") {
			continue
		}
		end := strings.LastIndexByte(rest, '}')
		if end < 0 {
			continue
		}
		labels := parseLabels(rest[:end])
		if metric == "apiserver_terminated_watchers_total" {
			// Watches the API server closed because the client did not
			// keep up (any client, the harness's included).
			labels["verb"] = "TERMINATED-WATCH"
		}
		line = rest
		res := labels["resource"]
		if res != "kopfexamples" && res != "events" {
			continue
		}
		if labels["subresource"] != "" {
			res += "/" + labels["subresource"]
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		out[labels["verb"]+" "+res] += int(v)
	}
	return out, sc.Err()
}

func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		key := s[:eq]
		rest := s[eq+2:]
		end := strings.IndexByte(rest, '"')
		if end < 0 {
			break
		}
		out[key] = rest[:end]
		s = strings.TrimPrefix(rest[end+1:], ",")
	}
	return out
}

// delta is after − before − harness, keeping positive entries.
func delta(before, after, harnessBefore, harnessAfter map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range after {
		d := v - before[k] - (harnessAfter[k] - harnessBefore[k])
		if d > 0 {
			out[k] = d
		}
	}
	return out
}
