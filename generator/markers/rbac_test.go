package markers

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/controller-tools/pkg/rbac"
)

// TestRBACRule checks that //kopf:rbac and controller-gen's
// +kubebuilder:rbac of the same meaning give the same rule.
func TestRBACRule(t *testing.T) {
	tbl := Kopf()
	tests := []struct {
		kopf, kubebuilder string
		want              rbac.Rule
	}{{
		`//kopf:rbac groups=[apps] resources=[deployments] verbs=[get, list, watch]`,
		`+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch`,
		rbac.Rule{Groups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch"}},
	}, {
		`//kopf:rbac groups=[""] resources=[pods, pods/log] verbs=[get]`,
		`+kubebuilder:rbac:groups="",resources=pods;pods/log,verbs=get`,
		rbac.Rule{Groups: []string{""}, Resources: []string{"pods", "pods/log"}, Verbs: []string{"get"}},
	}, {
		`//kopf:rbac groups=[core] resources=[secrets] resourceNames=[a, b] verbs=[get, update] namespace=ops`,
		`+kubebuilder:rbac:groups=core,resources=secrets,resourceNames=a;b,verbs=get;update,namespace=ops`,
		rbac.Rule{Groups: []string{"core"}, Resources: []string{"secrets"}, ResourceNames: []string{"a", "b"}, Verbs: []string{"get", "update"}, Namespace: "ops"},
	}, {
		`//kopf:rbac urls=[/healthz, "/metrics"] verbs=[get]`,
		`+kubebuilder:rbac:urls=/healthz;/metrics,verbs=get`,
		rbac.Rule{URLs: []string{"/healthz", "/metrics"}, Verbs: []string{"get"}},
	}, {
		`//kopf:rbac verbs=[*] groups=[*] resources=[*]`,
		`+kubebuilder:rbac:verbs=*,groups=*,resources=*`,
		rbac.Rule{Groups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
	}}
	for _, tt := range tests {
		t.Run(tt.kopf, func(t *testing.T) {
			m, err := tbl.Parse(tt.kopf, testPos)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.RBACRule(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("//kopf:rbac gives %#v, want %#v", got, tt.want)
			}
			if !tbl.IsKubebuilderRBAC(tt.kubebuilder) {
				t.Errorf("%s is not +kubebuilder:rbac", tt.kubebuilder)
			}
			got, err := ParseKubebuilderRBAC(tt.kubebuilder)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("+kubebuilder:rbac gives %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestParseKubebuilderRBACErrors checks that what controller-tools cannot
// parse is an error that says so, where its scanner stopped.
func TestParseKubebuilderRBACErrors(t *testing.T) {
	for _, tt := range []struct {
		text, at, msg string
	}{
		{"+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get,list", "", `expected equals, got ""`},
		{"+kubebuilder:rbac:groups=apps,resources=deployments,verb=get", "=get", `unknown argument "verb"`},
		{"+kubebuilder:rbac:groups=apps,resources=deployments", "", `missing argument "verbs"`},
	} {
		t.Run(tt.text, func(t *testing.T) {
			_, err := ParseKubebuilderRBAC(tt.text)
			var ke *KubebuilderError
			if !errors.As(err, &ke) {
				t.Fatalf("got %v, want a *KubebuilderError", err)
			}
			at := len(tt.text)
			if tt.at != "" {
				at = strings.Index(tt.text, tt.at)
			}
			if ke.Msg != tt.msg || ke.Error() != "cannot parse +kubebuilder:rbac: "+tt.msg {
				t.Errorf("got %q, want %q", ke.Error(), tt.msg)
			}
			if ke.Offset != at {
				t.Errorf("at offset %d, want %d", ke.Offset, at)
			}
		})
	}
}

// TestIsKubebuilderRBAC checks controller-tools' names: the name is what
// precedes the first '=', less its last part when that is an argument.
func TestIsKubebuilderRBAC(t *testing.T) {
	tbl := Kopf()
	for text, want := range map[string]bool{
		"+kubebuilder:rbac:groups=apps,verbs=get": true,
		"+kubebuilder:rbac:verbs=get":             true,
		"+kubebuilder:rbac":                       true,
		"+kubebuilder:rbacs:verbs=get":            false,
		"+kubebuilder:rbac:groups":                false,
		"+kubebuilder:object:root=true":           false,
	} {
		if got := tbl.IsKubebuilderRBAC(text); got != want {
			t.Errorf("IsKubebuilderRBAC(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestCheckRBACRule checks the rules that the API server would refuse and
// the verbs that are most likely typos.
func TestCheckRBACRule(t *testing.T) {
	tests := []struct {
		name string
		rule rbac.Rule
		want []string
	}{
		{"resources", rbac.Rule{Groups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "use", "escalate"}}, nil},
		{"urls", rbac.Rule{URLs: []string{"/healthz"}, Verbs: []string{"get"}}, nil},
		{"custom verb", rbac.Rule{Groups: []string{"x.example.com"}, Resources: []string{"things"}, Verbs: []string{"frobnicate"}}, nil},
		{"no groups", rbac.Rule{Resources: []string{"pods"}, Verbs: []string{"get"}},
			[]string{`missing groups=: resources need their API groups ("" or core for the core group: pods, secrets, configmaps)`}},
		{"nothing", rbac.Rule{Groups: []string{"apps"}, Verbs: []string{"get"}},
			[]string{"missing resources= (or urls=): the rule grants nothing"}},
		{"both", rbac.Rule{Groups: []string{""}, Resources: []string{"pods"}, URLs: []string{"/x"}, Verbs: []string{"get"}},
			[]string{"urls= cannot be combined with groups=, resources= or resourceNames=: a rule is of resources or of non-resource URLs; write two markers"}},
		{"urls in a namespace", rbac.Rule{URLs: []string{"/x"}, Verbs: []string{"get"}, Namespace: "ops"},
			[]string{"urls= cannot go with namespace=: non-resource URLs are cluster-wide, and a namespaced Role cannot grant them"}},
		{"a kind", rbac.Rule{Groups: []string{"apps"}, Resources: []string{"Deployment"}, Verbs: []string{"get"}},
			[]string{"resources: Deployment looks like a kind: RBAC names resources by their plural in lower case"}},
		{"typos", rbac.Rule{Groups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"gte", "List", "watch"}},
			[]string{"verbs: gte is not a Kubernetes verb; did you mean get?", "verbs: List is not a Kubernetes verb; did you mean list?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckRBACRule(tt.rule); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestKubebuilderWarning checks which kubebuilder markers kopf-gen says
// it does not read, and what it says.
func TestKubebuilderWarning(t *testing.T) {
	tbl := Kopf()
	tests := []struct{ comment, want string }{
		// Read: controller-gen's CRD, object and RBAC markers; kubebuilder's scaffolding; prose.
		{"// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get", ""},
		{"//+kubebuilder:object:root=true", ""},
		{"// +kubebuilder:validation:Minimum=1", ""},
		{"// +kubebuilder:subresource:status", ""},
		{"// +kubebuilder:printcolumn:name=Size,type=integer,JSONPath=.spec.size", ""},
		{"// +kubebuilder:scaffold:imports", ""},
		{"// kubebuilder: the tool", ""},
		{"// see +kubebuilder:rbca in the docs", ""},
		{"/* +kubebuilder:rbca:groups=apps */", ""},

		{"// +kubebuilder:rbca:groups=apps,resources=deployments,verbs=get",
			"kopf-gen does not read +kubebuilder:rbca:groups: no generator that kopf-gen runs (controller-tools' CRD, object and RBAC generators) defines it; did you mean +kubebuilder:rbac?"},
		{"// +kubebuilder:subresource:statsu",
			"kopf-gen does not read +kubebuilder:subresource:statsu: no generator that kopf-gen runs (controller-tools' CRD, object and RBAC generators) defines it; did you mean +kubebuilder:subresource:status?"},
		{"// +kubebuilder:frobnicate",
			"kopf-gen does not read +kubebuilder:frobnicate: no generator that kopf-gen runs (controller-tools' CRD, object and RBAC generators) defines it"},
		{"// +kubebuilder:webhook:path=/validate,mutating=false,failurePolicy=fail,groups=x,resources=y,verbs=create,versions=v1,name=v.x",
			"kopf-gen does not read +kubebuilder:webhook:path: it is controller-runtime's webhook; admission webhooks are //kopf:on.validate and //kopf:on.mutate handlers (docs/admission.md)"},
		{"// kubebuilder:rbac:groups=apps,resources=deployments,verbs=get",
			"not a marker: did you mean //+kubebuilder:rbac:groups...? controller-gen's markers start with '+'"},
		{"//+Kubebuilder:rbac:groups=apps,resources=deployments,verbs=get",
			"not a marker: did you mean //+kubebuilder:rbac:groups...? controller-gen's markers are case-sensitive"},
	}
	for _, tt := range tests {
		t.Run(tt.comment, func(t *testing.T) {
			got, warn := tbl.KubebuilderWarning(tt.comment)
			if warn != (tt.want != "") || got != tt.want {
				t.Errorf("got %q (%v), want %q", got, warn, tt.want)
			}
		})
	}
}
