package model

import (
	"go/token"
	"go/types"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/resources"
)

func TestK8sAlias(t *testing.T) {
	for path, want := range map[string]string{
		"k8s.io/api/core/v1":                   "corev1",
		"k8s.io/api/networking/v1beta1":        "networkingv1beta1",
		"k8s.io/apimachinery/pkg/apis/meta/v1": "metav1",
		"k8s.io/api/core":                      "",
		"k8s.io/api/a/b/c":                     "",
		"example.com/api/v1":                   "",
		"k8s.io/apimachinery/pkg/runtime":      "",
		"k8s.io/api/storage.k8s.io/v1":         "",
	} {
		if got := k8sAlias(path); got != want {
			t.Errorf("k8sAlias(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestTypedMatches(t *testing.T) {
	typed := &Typed{Group: "kopf.dev", Version: "v1", Names: []string{"kopfexamples", "KopfExample", "kopfexample"}}
	pods := &Typed{Group: "", Version: "v1", Names: []string{"pods", "pod", "Pod", "po"}}
	for _, tt := range []struct {
		t    *Typed
		sel  resources.Selector
		want bool
	}{
		{typed, resources.Selector{Name: "kopfexamples"}, true},
		{typed, resources.Selector{Name: "KopfExample"}, true},
		{typed, resources.Selector{Group: "kopf.dev", Name: "kopfexample"}, true},
		{typed, resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}, true},
		{typed, resources.Selector{Group: "kopf.dev", Version: "v2", Name: "kopfexamples"}, false},
		{typed, resources.Selector{Group: "other.dev", Name: "kopfexamples"}, false},
		{typed, resources.Selector{Version: "v1", Name: "kopfexamples", Core: true}, false},
		{typed, resources.Selector{Name: "kex"}, false},
		{pods, resources.Selector{Version: "v1", Name: "pods", Core: true}, true},
		{pods, resources.Selector{Name: "po"}, true},
		{pods, resources.Selector{Group: "metrics.k8s.io", Name: "pods"}, false},
	} {
		if got := tt.t.matches(tt.sel); got != tt.want {
			t.Errorf("%v matches %#v = %v, want %v", tt.t.Names, tt.sel, got, tt.want)
		}
	}
}

// TestWalkJSON covers what the generator's golden and error tests do not:
// shadowing by embedding, "-" tags and unexported fields.
func TestWalkJSON(t *testing.T) {
	pkg := types.NewPackage("example.com/p", "p")
	str := types.Typ[types.String]
	field := func(name string, typ types.Type, embedded bool) *types.Var {
		return types.NewField(token.NoPos, pkg, name, typ, embedded)
	}
	named := func(name string, st *types.Struct) *types.Named {
		return types.NewNamed(types.NewTypeName(token.NoPos, pkg, name, nil), st, nil)
	}
	inner := named("Inner", types.NewStruct([]*types.Var{field("A", str, false), field("B", str, false)}, []string{`json:"a"`, `json:"b"`}))
	outer := named("Outer", types.NewStruct(
		[]*types.Var{field("Inner", inner, true), field("B", types.NewMap(str, types.NewInterfaceType(nil, nil)), false), field("hidden", str, false), field("Skip", str, false), field("Plain", str, false)},
		[]string{``, `json:"b"`, `json:"hidden"`, `json:"-"`, ``},
	))
	q := types.RelativeTo(pkg)
	for path, want := range map[string]string{
		"a":         "",
		"b.x.y":     "", // the outer b, a map of any, shadows Inner's
		"Plain":     "",
		"hidden":    `no "hidden" in Outer; it has Plain, a, b`,
		"Skip":      `no "Skip" in Outer; it has Plain, a, b`,
		"a.x":       `a of Outer is a string: it has no "x"`,
		"Plain.x.y": `Plain of Outer is a string: it has no "x"`,
	} {
		_, i, why := walkJSON(outer, strings.Split(path, "."), q)
		if why != want || (want == "") != (i < 0) {
			t.Errorf("walkJSON(%s) = %d, %q; want %q", path, i, why, want)
		}
	}
}

// TestNearResource checks the typo rule for resources: near misses of
// known resources are caught, and no name of a real Kubernetes resource
// (or of common CRDs) that kopf-gen does not know is taken for one.
func TestNearResource(t *testing.T) {
	typed := []*Typed{{Group: "kopf.dev", Version: "v1", Names: []string{"kopfexamples", "KopfExample", "kopfexample"}}}
	for _, tt := range []struct {
		sel  resources.Selector
		want string
	}{
		{resources.Selector{Name: "kopfexmaples"}, "kopfexamples"},
		{resources.Selector{Name: "kopfxemaples"}, "kopfexamples"},
		{resources.Selector{Group: "kopf.dev", Version: "v1", Name: "KopfExmaple"}, "KopfExample"},
		{resources.Selector{Name: "deploymnets"}, "deployments"},
		{resources.Selector{Name: "pdos"}, "pods"},
		{resources.Selector{Name: "Pods"}, "pods"},
		{resources.Selector{Version: "v1", Name: "secrtes", Core: true}, "secrets"},
		{resources.Selector{Group: "batch", Name: "cronjbos"}, "cronjobs"},
		// Exact names, other groups, other versions, far names.
		{resources.Selector{Name: "kopfexamples"}, ""},
		{resources.Selector{Group: "kopf.dev", Version: "v2", Name: "kopfexamples"}, ""},
		{resources.Selector{Group: "other.dev", Name: "kopfexmaples"}, ""},
		{resources.Selector{Version: "v1", Name: "kopfexmaples", Core: true}, ""},
		{resources.Selector{Group: "apps", Name: "pdos"}, ""},
		{resources.Selector{Name: "*"}, ""},
		{resources.Selector{Name: "po"}, ""},
		{resources.Selector{Name: "widgets"}, ""},
	} {
		if got := nearResource(tt.sel, typed); got != tt.want {
			t.Errorf("nearResource(%#v) = %q, want %q", tt.sel, got, tt.want)
		}
	}

	// The resources of Kubernetes 1.35 and some common CRDs: plural,
	// kind (the singular is its lower case) and short names.
	real := []string{
		"bindings Binding", "componentstatuses ComponentStatus cs", "configmaps ConfigMap cm",
		"endpoints Endpoints ep", "events Event ev", "limitranges LimitRange limits",
		"namespaces Namespace ns", "nodes Node no", "persistentvolumeclaims PersistentVolumeClaim pvc",
		"persistentvolumes PersistentVolume pv", "pods Pod po", "podtemplates PodTemplate",
		"replicationcontrollers ReplicationController rc", "resourcequotas ResourceQuota quota",
		"secrets Secret", "serviceaccounts ServiceAccount sa", "services Service svc",
		"mutatingwebhookconfigurations MutatingWebhookConfiguration",
		"validatingwebhookconfigurations ValidatingWebhookConfiguration",
		"validatingadmissionpolicies ValidatingAdmissionPolicy", "validatingadmissionpolicybindings ValidatingAdmissionPolicyBinding",
		"mutatingadmissionpolicies MutatingAdmissionPolicy", "customresourcedefinitions CustomResourceDefinition crd crds",
		"apiservices APIService", "controllerrevisions ControllerRevision", "daemonsets DaemonSet ds",
		"deployments Deployment deploy", "replicasets ReplicaSet rs", "statefulsets StatefulSet sts",
		"selfsubjectreviews SelfSubjectReview", "tokenreviews TokenReview",
		"localsubjectaccessreviews LocalSubjectAccessReview", "selfsubjectaccessreviews SelfSubjectAccessReview",
		"selfsubjectrulesreviews SelfSubjectRulesReview", "subjectaccessreviews SubjectAccessReview",
		"horizontalpodautoscalers HorizontalPodAutoscaler hpa", "cronjobs CronJob cj", "jobs Job",
		"certificatesigningrequests CertificateSigningRequest csr", "clustertrustbundles ClusterTrustBundle",
		"leases Lease", "leasecandidates LeaseCandidate", "endpointslices EndpointSlice",
		"flowschemas FlowSchema", "prioritylevelconfigurations PriorityLevelConfiguration",
		"ingressclasses IngressClass", "ingresses Ingress ing", "networkpolicies NetworkPolicy netpol",
		"ipaddresses IPAddress", "servicecidrs ServiceCIDR", "runtimeclasses RuntimeClass",
		"poddisruptionbudgets PodDisruptionBudget pdb", "clusterrolebindings ClusterRoleBinding",
		"clusterroles ClusterRole", "rolebindings RoleBinding", "roles Role",
		"deviceclasses DeviceClass", "resourceclaims ResourceClaim", "resourceclaimtemplates ResourceClaimTemplate",
		"resourceslices ResourceSlice", "priorityclasses PriorityClass pc", "csidrivers CSIDriver",
		"csinodes CSINode", "csistoragecapacities CSIStorageCapacity", "storageclasses StorageClass sc",
		"volumeattachments VolumeAttachment", "volumeattributesclasses VolumeAttributesClass vac",
		"certificates Certificate cert certs", "issuers Issuer", "clusterissuers ClusterIssuer",
		"servicemonitors ServiceMonitor", "podmonitors PodMonitor", "prometheusrules PrometheusRule",
		"virtualservices VirtualService vs", "gateways Gateway gw", "httproutes HTTPRoute",
		"applications Application app apps", "kustomizations Kustomization ks", "helmreleases HelmRelease hr",
		"kopfpeerings KopfPeering", "clusterkopfpeerings ClusterKopfPeering",
	}
	for _, line := range real {
		names := strings.Fields(line)
		names = append(names, strings.ToLower(names[1]))
		for _, name := range names {
			if got := nearResource(resources.Selector{Name: name}, nil); got != "" {
				t.Errorf("%s, a real resource name, is taken for a typo of %s", name, got)
			}
		}
	}
}
