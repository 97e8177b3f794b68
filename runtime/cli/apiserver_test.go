package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/internal/testutil"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// With the API server's address dead, `run --log-format json` logs in JSON
// only, client-go's klog lines included, and one WARNING names the server
// and "connection refused".
func TestRunUnreachableServerLogsJSON(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "https://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	kubeconfig := writeKubeconfig(t, server, "some-token")

	var out syncBuffer
	cmd := NewCommand(registerExample, &out)
	cmd.SetArgs([]string{"run", "--log-format", "json", "--kubeconfig", kubeconfig, "-A", "--standalone"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the command failed: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("the command did not stop in 10 s")
		}
	})

	waitFor(t, &out, "connection refused", 20*time.Second)
	// A line of klog's own, as client-go writes them, must be JSON too.
	klog.ErrorS(errors.New("probe error"), "A klog probe")
	waitFor(t, &out, "A klog probe", 5*time.Second)

	var named bool
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec struct { // Kopf's JSON fields
			Severity string `json:"severity"`
			Message  string `json:"message"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a line is not JSON (%v): %s", err, line)
			continue
		}
		if rec.Severity == "warn" && strings.Contains(rec.Message, "The API server "+server+" is unreachable (connection refused)") {
			named = true
		}
	}
	if !named {
		t.Errorf("no warn line names the server %s and the connection refused; the log:\n%s", server, out.String())
	}
}

func registerExample(r *registry.Registry) error {
	return r.AddChanging(registry.ChangingHandler{
		ID:       "create_fn",
		Selector: resources.Selector{Group: "kopf.dev", Name: "kopfexamples"},
		Reasons:  []causes.Reason{causes.Create},
		Fn:       func(context.Context, *kwargs.Changing) (any, error) { return nil, nil },
	})
}

// writeKubeconfig writes a kubeconfig for a server and a bearer token.
func writeKubeconfig(t *testing.T, server, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: test
  user: {token: %q}
contexts:
- name: test
  context: {cluster: test, user: test}
current-context: test
`, server, token)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func waitFor(t *testing.T, out *syncBuffer, text string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(out.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("%q is not logged in %s; the log:\n%s", text, timeout, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type syncBuffer = testutil.Buffer

// Options set in code take effect under the command line, and its flags
// take precedence: the logger and the configuration of the options are
// used unless --kubeconfig names another, and their namespaces are the
// default of -n/-A.
func TestRunOptionsAndFlags(t *testing.T) {
	deadServer := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return "https://" + ln.Addr().String()
	}
	inCode, onFlag := deadServer(), deadServer()
	kubeconfig := writeKubeconfig(t, onFlag, "some-token")
	tests := []struct {
		name       string
		args       []string
		opts       Options
		server     string // the server named in the log
		noNSWarned bool   // whether the whole-cluster warning must be absent
	}{
		{"options only", []string{"run", "--standalone"}, Options{AllNamespaces: true}, inCode, true},
		{"--kubeconfig wins", []string{"run", "--standalone", "--kubeconfig", kubeconfig}, Options{Namespaces: []string{"ns1"}}, onFlag, true},
		{"no namespaces anywhere", []string{"run", "--standalone"}, Options{}, inCode, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out syncBuffer
			tt.opts.Logger = slog.New(slog.NewTextHandler(&out, nil))
			tt.opts.Config = &rest.Config{Host: inCode, BearerToken: "t", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
			cmd := NewCommandWith(registerExample, io.Discard, tt.opts)
			cmd.SetArgs(tt.args)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- cmd.ExecuteContext(ctx) }()
			waitFor(t, &out, "The API server "+tt.server+" is unreachable", 20*time.Second)
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("the command failed: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the command did not stop in 10 s")
			}
			if warned := strings.Contains(out.String(), "No namespaces are specified"); warned == tt.noNSWarned {
				t.Errorf("the whole-cluster warning is logged: %v, want %v; the log:\n%s", warned, !tt.noNSWarned, out.String())
			}
		})
	}
}

// -d lets client-go's own debug lines through, as Kopf's -d does the
// low-level libraries': each request's method, URL and status, at DEBUG;
// -v does not, and neither logs the requests' headers (curl commands).
func TestRunDebugLogsRequests(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	kubeconfig := writeKubeconfig(t, srv.URL, "some-token")
	t.Cleanup(func() { // klog's verbosity is process-wide: back to the default
		var fs flag.FlagSet
		klog.InitFlags(&fs)
		_ = fs.Set("v", "0")
	})
	for _, tt := range []struct {
		flag     string
		requests bool
	}{
		{"-v", false},
		{"-d", true},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			var out syncBuffer
			cmd := NewCommand(registerExample, &out)
			cmd.SetArgs([]string{"run", tt.flag, "--log-format", "plain", "--kubeconfig", kubeconfig, "-A", "--standalone"})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- cmd.ExecuteContext(ctx) }()
			// The discovery fails (404), after the requests.
			waitFor(t, &out, "cannot be discovered", 20*time.Second)
			cancel()
			if err := <-done; err != nil {
				t.Errorf("the command failed: %v", err)
			}
			response := regexp.MustCompile(`(?m)^Response verb=GET url=` + regexp.QuoteMeta(srv.URL) + `/\S+ status=404 Not Found`)
			if got := response.MatchString(out.String()); got != tt.requests {
				t.Errorf("client-go's request lines are logged: %v, want %v; the log:\n%s", got, tt.requests, out.String())
			}
			if strings.Contains(out.String(), "curlCommand") {
				t.Errorf("the requests' headers are logged:\n%s", out.String())
			}
		})
	}
}
