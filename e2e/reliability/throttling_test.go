package reliability_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
)

// throttledUser is the operator's own identity in TestThrottling (a
// client certificate; not in system:masters, whose requests API Priority
// and Fairness exempts).
const throttledUser = "kopf-throttled-operator"

// API Priority and Fairness gives the operator's user one seat at a time
// and rejects the rest (429 Too Many Requests, with a Retry-After): the
// operator, handling a burst of objects, waits as told, finishes with
// every object handled and no handler run twice, says so in its log, and
// counts the 429s in its metrics.
func TestThrottling(t *testing.T) {
	t.Parallel()
	// APF shares the server's seats (the two flags' sum) among the priority
	// levels by their shares: ~245 of the default levels, 1 of ours. With
	// 15 seats in all, ours has one, and borrows none.
	c := startCluster(t,
		envtest.WithAPIServerFlag("max-requests-inflight", "10"),
		envtest.WithAPIServerFlag("max-mutating-requests-inflight", "5"))
	userCfg := throttledOperator(t, c)
	const ns, count = "throttled", 20
	ri := objects(c.Config, ns)
	for i := range count {
		create(t, ri, example(fmt.Sprintf("obj-%02d", i), nil, nil, nil))
	}

	var rec calls
	addr := freeAddress(t)
	start := time.Now()
	// A few requests at once, not the default 16: with one seat, 16
	// requests that client-go sends again after the same Retry-After
	// collide again, APF raises its Retry-After (up to 32 s), and the
	// operator starves (see docs/troubleshooting.md).
	s := fastSettings()
	s.Networking.MaxInFlight = 3
	op := kopftest.Start(t, userCfg, register(handler("create_fn", rec.recording("create_fn", message("created")), causes.Create)),
		kopf.WithNamespaces(ns), kopf.WithMetrics(addr), kopf.WithPlainMetrics(), withSettings(s))
	for i := range count {
		waitHandled(t, ri, fmt.Sprintf("obj-%02d", i), 2*time.Minute, "create_fn")
	}
	elapsed := time.Since(start)

	for i := range count {
		if n := len(rec.of("create_fn", fmt.Sprintf("obj-%02d", i))); n != 1 {
			t.Errorf("obj-%02d: create_fn ran %d times, want once", i, n)
		}
	}
	throttled := requests429(t, addr)
	if throttled == 0 {
		t.Fatalf("no request was throttled (kopf_api_requests_total{code=\"429\"} is 0): the test proves nothing")
	}
	logs := op.Logs()
	line := fmt.Sprintf("The API server %s throttles the operator's requests (429 Too Many Requests): ", strings.TrimSuffix(c.Config.Host, "/"))
	if !strings.Contains(logs, line) || !strings.Contains(logs, "as told (Retry-After).") {
		t.Errorf("the log does not name the throttling (%q)", line)
	}
	t.Logf("throttling: %d objects handled in %s under 1 APF seat (3 requests in flight at most); %.0f requests throttled (429), each handler once", count, elapsed.Round(time.Millisecond), throttled)
}

// throttledOperator makes the operator's user (cluster-admin through RBAC)
// and the FlowSchema and PriorityLevelConfiguration that throttle it, waits
// until API Priority and Fairness applies them, and returns its
// configuration.
func throttledOperator(t *testing.T, c *cluster.Cluster) *rest.Config {
	t.Helper()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: throttledUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: throttledUser}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "throttled"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: throttledUser},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1),
				LendablePercent:          ptr.To[int32](0),
				BorrowingLimitPercent:    ptr.To[int32](0),
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := []string{flowcontrolv1.VerbAll}
	fs, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: throttledUser},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: throttledUser},
			MatchingPrecedence:         50,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: throttledUser}}},
				ResourceRules:    []flowcontrolv1.ResourcePolicyRule{{Verbs: all, APIGroups: all, Resources: all, ClusterScope: true, Namespaces: all}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: all, NonResourceURLs: all}},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := c.UserConfig(throttledUser)
	if err != nil {
		t.Fatal(err)
	}
	// APF tells which FlowSchema classified a request in a header.
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = cluster.WaitFor(ctx, 30*time.Second, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/api", nil)
		resp, err := client.Do(req)
		if err != nil {
			return false, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID") == string(fs.UID), nil
	})
	if err != nil {
		t.Fatalf("the FlowSchema %s does not apply to %s: %v", throttledUser, throttledUser, err)
	}
	return cfg
}

// requests429 scrapes the operator's metrics and sums its API requests
// answered 429.
func requests429(t *testing.T, addr string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "kopf_api_requests_total{") && strings.Contains(line, `code="429"`) {
			v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			if err != nil {
				t.Fatalf("metrics line %q: %v", line, err)
			}
			sum += v
		}
	}
	return sum
}

// freeAddress returns a local address whose port is free now.
func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}
