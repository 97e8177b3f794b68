package deployed

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// auditPolicy records the requests of service accounts (the operators'),
// once each, when they complete, with their authorization's decision and
// reason; nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
`

// auditEvent is what the test reads of an audit.k8s.io/v1 Event (the
// format of the API server's --audit-log-path, one JSON object a line).
type auditEvent struct {
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	Annotations map[string]string `json:"annotations"`
}

// The annotations of the authorizer's decision and its reason ("RBAC:
// allowed by ClusterRoleBinding "b" of ClusterRole "r" to ServiceAccount
// "sa/ns"").
const (
	decisionKey = "authorization.k8s.io/decision"
	reasonKey   = "authorization.k8s.io/reason"
)

// permission is what RBAC grants: a verb on a resource (with its
// subresource, as in a rule: "kopfexamples/status") of an API group.
type permission struct{ verb, group, resource string }

func (p permission) String() string {
	if p.group == "" {
		return p.verb + " " + p.resource
	}
	return p.verb + " " + p.resource + "." + p.group
}

// permissionOf is the permission that an audited request needs; ok is
// false for non-resource URLs (discovery, /version).
func permissionOf(ev auditEvent) (p permission, ok bool) {
	if ev.ObjectRef == nil || ev.ObjectRef.Resource == "" {
		return permission{}, false
	}
	resource := ev.ObjectRef.Resource
	if ev.ObjectRef.Subresource != "" {
		resource += "/" + ev.ObjectRef.Subresource
	}
	return permission{ev.Verb, ev.ObjectRef.APIGroup, resource}, true
}

// audited returns the audited requests of the deployment's ServiceAccount
// so far. It first makes a request of its own with the token (a
// SelfSubjectReview, which every authenticated user may create) and waits
// for it in the log, so that the requests made before are there too; that
// request is left out.
func (d *deployment) audited(t *testing.T) []auditEvent {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", d.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	if _, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the ServiceAccount's own review: %v", err)
	}
	var events []auditEvent
	poll(t, 10*time.Second, "the audit log of "+d.user(), func() bool {
		events = readAudit(t, d.user())
		return slices.ContainsFunc(events, isReview)
	})
	return slices.DeleteFunc(events, isReview)
}

func isReview(ev auditEvent) bool {
	return ev.ObjectRef != nil && ev.ObjectRef.Resource == "selfsubjectreviews"
}

// readAudit reads the audit log's events of a user.
func readAudit(t *testing.T, user string) []auditEvent {
	t.Helper()
	f, err := os.Open(audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue // a line being written
		}
		if ev.User.Username == user {
			events = append(events, ev)
		}
	}
	return events
}

// refusals are the requests that the authorizer refused, by permission,
// with the first URI of each.
func refusals(events []auditEvent) map[string]string {
	refused := map[string]string{}
	for _, ev := range events {
		if ev.Annotations[decisionKey] != "forbid" {
			continue
		}
		what := ev.RequestURI
		if p, ok := permissionOf(ev); ok {
			what = p.String()
		}
		if _, seen := refused[what]; !seen {
			refused[what] = ev.Verb + " " + ev.RequestURI
		}
	}
	return refused
}

// usage is which permissions of an operator's roles its requests used.
type usage struct {
	// granted are the permissions of its Roles and ClusterRoles, by
	// role ("ClusterRole name", "Role name").
	granted map[permission]string
	// used are the granted permissions that a request used.
	used map[permission]bool
	// others are the permissions of the allowed requests that its roles
	// do not grant, with the reason of their allowance (the default
	// roles of every authenticated user, such as system:discovery).
	others map[string]string
}

// use computes the usage of the deployment's roles by the events.
func (d *deployment) use(t *testing.T, events []auditEvent) *usage {
	t.Helper()
	u := &usage{granted: map[permission]string{}, used: map[permission]bool{}, others: map[string]string{}}
	for _, obj := range d.objects {
		if kind := obj.GetKind(); kind == "ClusterRole" || kind == "Role" {
			for _, p := range rules(t, obj) {
				u.granted[p] = kind + " " + obj.GetName()
			}
		}
	}
	for _, ev := range events {
		if ev.Annotations[decisionKey] != "allow" {
			continue
		}
		p, ok := permissionOf(ev)
		if !ok {
			u.others[ev.RequestURI] = ev.Annotations[reasonKey]
			continue
		}
		if role, granted := u.granted[p]; granted && strings.Contains(ev.Annotations[reasonKey], fmt.Sprintf(" of %s %q ", strings.Fields(role)[0], strings.Fields(role)[1])) {
			u.used[p] = true
		} else {
			u.others[p.String()] = ev.Annotations[reasonKey]
		}
	}
	return u
}

// rules expands the rules of a Role or ClusterRole into permissions.
func rules(t *testing.T, obj *unstructured.Unstructured) []permission {
	t.Helper()
	var role rbacv1.ClusterRole // a Role's rules are the same
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &role); err != nil {
		t.Fatal(err)
	}
	var ps []permission
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					ps = append(ps, permission{v, g, res})
				}
			}
		}
	}
	return ps
}

// unused are the granted permissions that no request used, sorted.
func (u *usage) unused() []string {
	var out []string
	for p, role := range u.granted {
		if !u.used[p] {
			out = append(out, p.String()+" ("+role+")")
		}
	}
	sort.Strings(out)
	return out
}

// usedList are the used permissions, sorted.
func (u *usage) usedList() []string {
	var out []string
	for p := range u.used {
		out = append(out, p.String())
	}
	sort.Strings(out)
	return out
}

// report is the usage in a few lines, for the test's log.
func (u *usage) report(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d of %d granted permissions used\n", name, len(u.used), len(u.granted))
	fmt.Fprintf(&b, "  used:   %s\n", strings.Join(u.usedList(), ", "))
	fmt.Fprintf(&b, "  unused: %s\n", strings.Join(u.unused(), ", "))
	var others []string
	for what := range u.others {
		others = append(others, what)
	}
	sort.Strings(others)
	fmt.Fprintf(&b, "  allowed by other roles (every authenticated user's): %s\n", strings.Join(others, ", "))
	return b.String()
}
