// Package health checks the liveness and readiness endpoints on a real
// control plane: they answer 200 while the operator works, also while its
// watches are quiet, fail with the reasons while kube-apiserver is frozen
// (SIGSTOP) for longer than the inactivity timeout, and recover when it
// resumes.
package health

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/kopftest"
)

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// probe GETs url as the kubelet does (with a timeout) and returns the
// status code and the body; 0 if there is no answer.
func probe(url string) (int, string) {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// waitProbe polls url until it answers code, and returns the body.
func waitProbe(t *testing.T, url string, code int, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got, body := probe(url)
		if got == code {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %s; want %d within %s", url, got, body, code, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestHealthEndpoints(t *testing.T) {
	ctx := context.Background()
	c := cluster.Start(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	const ns = "health-e2e"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var created atomic.Int32
	register := func(r *kopf.Registry) error {
		return r.AddChanging(kopf.ChangingHandler{
			ID:       "create_fn",
			Selector: kopf.Selector{Version: "v1", Name: "configmaps", Core: true},
			Reasons:  []kopf.Reason{kopf.ReasonCreate},
			Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
				if strings.HasPrefix(kw.Name, "cm-") {
					created.Add(1)
				}
				return nil, nil
			},
		})
	}
	createCM := func(name string) {
		t.Helper()
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitCreated := func(n int32) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for created.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d objects handled, want %d", created.Load(), n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	const inactivity = 3 * time.Second
	liveness := "http://" + freeAddr(t) + "/healthz"
	readiness := "http://" + freeAddr(t) + "/readyz"
	op := kopftest.Start(t, c.Config, register,
		kopf.WithNamespaces(ns),
		kopf.WithSettings(func(s *kopf.Settings) { s.Watching.InactivityTimeout = inactivity }),
		kopf.WithLiveness(liveness),
		kopf.WithReadiness(readiness),
	)

	// Ready once listed; live, with no probes: Kopf's empty JSON object.
	if body := waitProbe(t, readiness, 200, 30*time.Second); strings.TrimSpace(body) != `{"ready":true}` {
		t.Errorf("readiness: %s", body)
	}
	if body := waitProbe(t, liveness, 200, time.Second); strings.TrimSpace(body) != `{}` {
		t.Errorf("liveness: %s", body)
	}
	createCM("cm-before")
	waitCreated(1)

	// Quiet watches are healthy: for three inactivity timeouts nothing
	// changes, the watch is ended and re-established every 3 s, and both
	// probes answer 200 all along.
	stalls := op.CountLog("has been silent for 3 seconds; re-establishing it.")
	for end := time.Now().Add(3 * inactivity); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		for _, url := range []string{liveness, readiness} {
			if code, body := probe(url); code != 200 {
				t.Fatalf("a quiet operator fails its probe: GET %s: %d %s", url, code, body)
			}
		}
	}
	if op.CountLog("has been silent for 3 seconds; re-establishing it.") == stalls {
		t.Errorf("the quiet watch was not re-established: the test did not test a quiet watch")
	}

	// kube-apiserver hangs: both probes fail, saying which watch is down
	// since when (and, once requests time out, that the server is
	// unreachable).
	if err := c.PauseAPIServer(); err != nil {
		t.Fatal(err)
	}
	paused := true
	t.Cleanup(func() {
		if paused {
			_ = c.ResumeAPIServer()
		}
	})
	pausedAt := time.Now()
	body := waitProbe(t, liveness, 500, 30*time.Second)
	t.Logf("liveness fails %s after the pause: %s", time.Since(pausedAt).Round(100*time.Millisecond), body)
	var failed struct {
		Problems []struct {
			Message, Watch, APIServer string
			Since                     time.Time
		}
	}
	if err := json.Unmarshal([]byte(body), &failed); err != nil {
		t.Fatal(err)
	}
	watchDown := false
	for _, p := range failed.Problems {
		if p.Watch == fmt.Sprintf("configmaps.v1 in %s", ns) && strings.Contains(p.Message, "The watch of configmaps.v1 in "+ns+" has been down for ") &&
			p.Since.After(pausedAt.Add(-time.Second)) && p.Since.Before(time.Now()) {
			watchDown = true
		}
	}
	if !watchDown {
		t.Errorf("liveness does not say that the watch is down since the pause: %s", body)
	}
	if since := time.Since(pausedAt); since < inactivity {
		t.Errorf("liveness fails %s after the pause, sooner than the inactivity timeout", since)
	}
	body = waitProbe(t, readiness, 503, 10*time.Second)
	if !strings.Contains(body, `"ready":false`) || !strings.Contains(body, "The watch of configmaps.v1 in "+ns) {
		t.Errorf("readiness does not say why: %s", body)
	}
	// Requests to the frozen server time out; then it is named too.
	body = waitProbe(t, liveness, 500, 30*time.Second)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(body, `"apiServer":"`+strings.TrimSuffix(c.Config.Host, "/")+`"`); {
		if time.Now().After(deadline) {
			t.Errorf("liveness does not say that the API server is unreachable: %s", body)
			break
		}
		time.Sleep(500 * time.Millisecond)
		_, body = probe(liveness)
	}

	// kube-apiserver resumes: both recover, and the operator reacts.
	if err := c.ResumeAPIServer(); err != nil {
		t.Fatal(err)
	}
	paused = false
	resumedAt := time.Now()
	waitProbe(t, liveness, 200, 60*time.Second)
	waitProbe(t, readiness, 200, 10*time.Second)
	t.Logf("both probes recover %s after the resume", time.Since(resumedAt).Round(100*time.Millisecond))
	createCM("cm-after")
	waitCreated(2)
}
