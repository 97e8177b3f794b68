package reliability_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/cli"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// The operator starts while kube-apiserver is down: it says which server
// it cannot reach and why, again a second later, and not that the CRD is
// missing; once the server is up, it says so and handles the object that
// waited and a new one.
func TestAPIServerDownAtStart(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	host := strings.TrimSuffix(c.Config.Host, "/")
	ri := objects(c.Config, "default")
	create(t, ri, example("early", nil, nil, nil))
	if err := c.StopAPIServer(); err != nil {
		t.Fatalf("stopping the API server: %v", err)
	}
	op := kopftest.Start(t, c.Config, register(handler("create_fn", message("created"), causes.Create)))
	op.WaitLog("[WARNING ] The API server "+host+" is unreachable (connection refused): GET /api", 10*time.Second)
	op.WaitLog("[WARNING ] The API server "+host+" is still unreachable after 1 seconds (connection refused)", 10*time.Second)
	if err := c.StartAPIServer(); err != nil {
		t.Fatalf("starting the API server: %v", err)
	}
	op.WaitLog("[INFO    ] The API server "+host+" is reachable again after ", 30*time.Second)
	waitHandled(t, ri, "early", 30*time.Second, "create_fn")
	create(t, ri, example("later", nil, nil, nil))
	waitHandled(t, ri, "later", 30*time.Second, "create_fn")
	if strings.Contains(op.Logs(), "Unresolved resources") {
		t.Errorf("the CRD is said to be missing although the API server was only down")
	}
}

// kube-apiserver is stopped for 30 s while the operator runs: the outage is
// reported at once, then with backoff and never more than the inactivity
// timeout apart, and its end is reported; objects created after it are
// handled, and the object handled before it is not handled again.
func TestAPIServerDownFor30s(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	host := strings.TrimSuffix(c.Config.Host, "/")
	ri := objects(c.Config, "default")
	var rec calls
	s := fastSettings()
	s.Watching.InactivityTimeout = 8 * time.Second
	op := kopftest.Start(t, c.Config, register(handler("create_fn", rec.recording("create_fn", message("created")), causes.Create)), withSettings(s))
	create(t, ri, example("before", nil, nil, nil))
	waitHandled(t, ri, "before", 30*time.Second, "create_fn")

	if err := c.StopAPIServer(); err != nil {
		t.Fatalf("stopping the API server: %v", err)
	}
	stopped := time.Now()
	op.WaitLog("[WARNING ] The API server "+host+" is unreachable (", 10*time.Second)
	// The outage itself: 30 s without the API server.
	time.Sleep(time.Until(stopped.Add(30 * time.Second)))
	if err := c.StartAPIServer(); err != nil {
		t.Fatalf("starting the API server: %v", err)
	}
	restarted := time.Now()
	op.WaitLog("[INFO    ] The API server "+host+" is reachable again after ", s.Watching.InactivityTimeout+10*time.Second)

	log := op.Logs()
	reports := logTimes(t, log, "The API server "+host+" is unreachable (", "The API server "+host+" is still unreachable after ")
	if len(reports) < 5 {
		t.Errorf("the 30-s outage is reported %d times, want at least 5 (at 0, 1, 3, 7, 15 s...)", len(reports))
	}
	if len(reports) > 0 && reports[0].Sub(stopped) > 5*time.Second {
		t.Errorf("the outage is first reported %s after the API server stopped", reports[0].Sub(stopped))
	}
	for i := 1; i < len(reports); i++ {
		if gap := reports[i].Sub(reports[i-1]); reports[i].Before(restarted) && gap > s.Watching.InactivityTimeout+time.Second {
			t.Errorf("the operator is silent for %s during the outage, longer than the inactivity timeout %s", gap, s.Watching.InactivityTimeout)
		}
	}
	if len(logTimes(t, log, "is still unreachable after 1 seconds (connection refused): GET /")) != 1 {
		t.Errorf("the first reminder does not name the cause (connection refused)")
	}

	create(t, ri, example("after", nil, nil, nil))
	waitHandled(t, ri, "after", 60*time.Second, "create_fn")
	for _, name := range []string{"before", "after"} {
		if n := len(rec.of("create_fn", name)); n != 1 {
			t.Errorf("create_fn ran %d times for %s, want 1", n, name)
		}
	}
}

// logTimes returns the times of the log lines (Kopf's full format) that
// contain any of the texts.
func logTimes(t *testing.T, log string, texts ...string) []time.Time {
	t.Helper()
	var out []time.Time
	for _, line := range strings.Split(log, "\n") {
		for _, text := range texts {
			if !strings.Contains(line, text) {
				continue
			}
			end := strings.IndexByte(line, ']')
			at, err := time.ParseInLocation("2006-01-02 15:04:05,000", strings.TrimPrefix(line[:max(end, 0)], "["), time.Local)
			if err != nil {
				t.Fatalf("no time in the log line %q: %v", line, err)
			}
			out = append(out, at)
			break
		}
	}
	return out
}

// ephemeralCRD is a CRD of this test's own, deleted and created again, so
// that the tests sharing the control plane keep theirs.
const ephemeralCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: kopfephemerals.kopf.dev
spec:
  scope: Namespaced
  group: kopf.dev
  names: {kind: KopfEphemeral, plural: kopfephemerals, singular: kopfephemeral}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// The CRD of a served resource is deleted (its objects with it) and
// created again: the operator says that the resource is not served
// (404), then that its watch is resumed, and handles new objects.
func TestCRDDeletedAndRecreated(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "crd-recreated")
	host := strings.TrimSuffix(shared.Config.Host, "/")
	crds := dynamic.NewForConfigOrDie(shared.Config).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	apply := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := envtest.Apply(ctx, shared.Config, []byte(ephemeralCRD)); err != nil {
			t.Fatalf("applying the CRD: %v", err)
		}
	}
	apply()
	t.Cleanup(func() { _ = crds.Delete(context.Background(), "kopfephemerals.kopf.dev", metav1.DeleteOptions{}) })

	gvr := schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfephemerals"}
	ri := dynamic.NewForConfigOrDie(shared.Config).Resource(gvr).Namespace(ns)
	reg := func(r *registry.Registry) error {
		return r.AddChanging(registry.ChangingHandler{ID: "create_fn", Selector: resources.Selector{Name: "kopfephemerals"}, Reasons: []causes.Reason{causes.Create}, Fn: message("created")})
	}
	op := kopftest.Start(t, shared.Config, reg, kopf.WithNamespaces(ns))
	ephemeral := func(name string) *unstructured.Unstructured {
		obj := example(name, nil, nil, nil)
		obj.SetKind("KopfEphemeral")
		return obj
	}
	create(t, ri, ephemeral("first"))
	waitHandled(t, ri, "first", 30*time.Second, "create_fn")

	if err := crds.Delete(context.Background(), "kopfephemerals.kopf.dev", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the CRD: %v", err)
	}
	err := cluster.WaitFor(context.Background(), 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, "kopfephemerals.kopf.dev", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("the CRD is not deleted: %v", err)
	}
	what := "kopfephemerals.v1.kopf.dev in " + ns
	op.WaitLog("[WARNING ] The resource "+what+" is not served by the API server "+host+" (404): ", 30*time.Second)

	apply()
	op.WaitLog("[INFO    ] The watch of "+what+" is resumed.", 60*time.Second)
	create(t, ri, ephemeral("second"))
	waitHandled(t, ri, "second", 30*time.Second, "create_fn")
	if strings.Contains(op.Logs(), "[ERROR   ] Failed to watch") {
		t.Errorf("client-go's own report of the failed watch is logged as an error")
	}
}

// The operator runs as a user of its own, bound by a ClusterRole. The
// binding is deleted: the next watch is forbidden, and the operator says
// so, naming the verb, the resource and the user. The binding is restored:
// the watch resumes and an object created meanwhile is handled.
func TestRBACRevokedAndRestored(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "rbac-revoked")
	user := "kopf-operator-" + ns
	userCfg, err := shared.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(shared.Config)
	ctx := context.Background()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"kopf.dev"}, Resources: []string{"kopfexamples", "kopfexamples/status"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.RbacV1().ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{}) })
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "operator", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}},
	}
	bind := func() {
		t.Helper()
		if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatalf("binding the role: %v", err)
		}
	}
	bind()

	// A watch is authorised when it starts: with no events, a short
	// inactivity timeout re-establishes it soon after the binding is gone.
	s := fastSettings()
	s.Watching.InactivityTimeout = 3 * time.Second
	ri := objects(shared.Config, ns)
	op := kopftest.Start(t, userCfg, register(handler("create_fn", message("created"), causes.Create)), kopf.WithNamespaces(ns), withSettings(s))
	create(t, ri, example("before", nil, nil, nil))
	waitHandled(t, ri, "before", 30*time.Second, "create_fn")

	if err := cs.RbacV1().RoleBindings(ns).Delete(ctx, "operator", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	what := "kopfexamples.v1.kopf.dev in " + ns
	op.WaitLog("[WARNING ] Watching "+what+" is forbidden (403): ", 30*time.Second)
	var line string
	for _, l := range strings.Split(op.Logs(), "\n") {
		if strings.Contains(l, "is forbidden (403)") {
			line = l
			break
		}
	}
	for _, want := range []string{`User "` + user + `" cannot `, `resource "kopfexamples" in API group "kopf.dev" in the namespace "` + ns + `"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the 403 report does not name the user, verb and resource (%q):\n%s", want, line)
		}
	}
	if !strings.Contains(line, `cannot list `) && !strings.Contains(line, `cannot watch `) {
		t.Errorf("the 403 report does not name the verb:\n%s", line)
	}

	create(t, ri, example("during", nil, nil, nil))
	bind()
	op.WaitLog("[INFO    ] The watch of "+what+" is resumed.", 60*time.Second)
	waitHandled(t, ri, "during", 30*time.Second, "create_fn")
}

// The operator's kubeconfig has a token that the API server refuses (401);
// while the operator runs, the token in the file is replaced with a good
// one: the operator loads it on the next 401 (as Kopf re-logins) and
// handles the object that waited. It runs as the binary does: the cli's
// command, with --kubeconfig.
func TestKubeconfigTokenReloadedOn401(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "token-reloaded")
	host := strings.TrimSuffix(shared.Config.Host, "/")
	path := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig := func(token string) {
		t.Helper()
		data, err := shared.TokenKubeconfig(token)
		if err != nil {
			t.Fatal(err)
		}
		tmp := path + ".new"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil { // as kubectl and token rotators do: whole
			t.Fatal(err)
		}
	}
	writeKubeconfig("expired-token")
	ri := objects(shared.Config, ns)
	create(t, ri, example("waiting", nil, nil, nil))

	logs := &kopftest.Buffer{}
	cmd := cli.NewCommand(register(handler("create_fn", message("created"), causes.Create)), logs)
	cmd.SetArgs([]string{"run", "--kubeconfig", path, "-n", ns, "--standalone", "--verbose"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the operator failed: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("the operator did not stop in 30 s")
		}
		if t.Failed() {
			t.Logf("operator log:\n%s", logs.String())
		}
	})
	waitLog := func(text string, timeout time.Duration) {
		t.Helper()
		err := cluster.WaitFor(context.Background(), timeout, func(context.Context) (bool, error) {
			return strings.Contains(logs.String(), text), nil
		})
		if err != nil {
			t.Fatalf("the operator did not log %q in %s", text, timeout)
		}
	}
	waitLog("The API server "+host+" refuses the operator's credentials (401 Unauthorized): GET /api.", 10*time.Second)
	waitLog("Re-authentication has failed: the credentials at their source are the ones refused (401 Unauthorized).", 10*time.Second)

	writeKubeconfig(shared.Token())
	waitLog("Re-authentication has finished.", 30*time.Second)
	waitLog("The API server "+host+" is reachable again after ", 30*time.Second)
	waitHandled(t, ri, "waiting", 30*time.Second, "create_fn")
	if strings.Contains(logs.String(), "Unresolved resources") {
		t.Errorf("the CRD is said to be missing although the credentials were refused")
	}
}
