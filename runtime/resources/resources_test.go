package resources

import (
	"errors"
	"testing"
)

var (
	pods = Resource{Version: "v1", Plural: "pods", Singular: "pod", Kind: "Pod",
		ShortNames: []string{"po"}, Namespaced: true, Subresources: []string{"log", "status", "exec"}}
	podMetrics = Resource{Group: "metrics.k8s.io", Version: "v1beta1", Plural: "pods", Singular: "", Kind: "PodMetrics", Namespaced: true}
	kexV1      = Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Singular: "kopfexample",
		Kind: "KopfExample", ShortNames: []string{"kopfexes", "kex"}, Namespaced: true, Subresources: []string{"status"}}
	kexV1beta1 = Resource{Group: "kopf.dev", Version: "v1beta1", Plural: "kopfexamples", Singular: "kopfexample",
		Kind: "KopfExample", ShortNames: []string{"kex"}, Namespaced: true}
	kexLegacy = Resource{Group: "zalando.org", Version: "v1", Plural: "kopfexamples", Singular: "kopfexample", Kind: "KopfExample"}
	nodes     = Resource{Version: "v1", Plural: "nodes", Singular: "node", Kind: "Node", ShortNames: []string{"no"}}
)

func TestSelectorString(t *testing.T) {
	tests := []struct {
		sel  Selector
		want string
	}{
		{Selector{}, ""},
		{Selector{Name: "pods"}, "pods"},
		{Selector{Version: "v1", Name: "pods"}, "v1/pods"},
		{Selector{Group: "kopf.dev", Name: "kopfexamples"}, "kopf.dev/kopfexamples"},
		{Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}, "kopf.dev/v1/kopfexamples"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.sel.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResourceMethods(t *testing.T) {
	tests := []struct {
		name       string
		res        Resource
		apiVersion string
		str        string
		hasStatus  bool
	}{
		{"core", pods, "v1", "pods.v1", true},
		{"core without subresources", nodes, "v1", "nodes.v1", false},
		{"custom with status", kexV1, "kopf.dev/v1", "kopfexamples.v1.kopf.dev", true},
		{"custom without status", kexV1beta1, "kopf.dev/v1beta1", "kopfexamples.v1beta1.kopf.dev", false},
		{"only other subresources", Resource{Group: "apps", Version: "v1", Plural: "deployments", Subresources: []string{"scale"}},
			"apps/v1", "deployments.v1.apps", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.res.APIVersion(); got != tt.apiVersion {
				t.Errorf("APIVersion() = %q, want %q", got, tt.apiVersion)
			}
			if got := tt.res.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			if got := tt.res.HasStatusSubresource(); got != tt.hasStatus {
				t.Errorf("HasStatusSubresource() = %v, want %v", got, tt.hasStatus)
			}
		})
	}
}

func TestSelectorMatches(t *testing.T) {
	tests := []struct {
		name string
		sel  Selector
		res  Resource
		want bool
	}{
		{"plural", Selector{Name: "kopfexamples"}, kexV1, true},
		{"singular", Selector{Name: "kopfexample"}, kexV1, true},
		{"kind", Selector{Name: "KopfExample"}, kexV1, true},
		{"short name", Selector{Name: "kex"}, kexV1, true},
		{"second short name", Selector{Name: "kopfexes"}, kexV1, true},
		{"other name", Selector{Name: "pods"}, kexV1, false},
		{"names are case-sensitive", Selector{Name: "kopfExamples"}, kexV1, false},
		{"kind is case-sensitive", Selector{Name: "kopfexample2"}, kexV1, false},
		{"group matches", Selector{Group: "kopf.dev", Name: "kopfexamples"}, kexV1, true},
		{"group mismatches", Selector{Group: "zalando.org", Name: "kopfexamples"}, kexV1, false},
		{"version matches", Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}, kexV1, true},
		{"version mismatches", Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}, kexV1beta1, false},
		{"version without group", Selector{Version: "v1beta1", Name: "kex"}, kexV1beta1, true},
		{"no group means any group", Selector{Name: "pods"}, podMetrics, true},
		{"core group is not given as a group", Selector{Version: "v1", Name: "pods"}, pods, true},
		{"core short name", Selector{Name: "po"}, pods, true},
		{"core kind", Selector{Name: "Pod"}, pods, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sel.Matches(tt.res); got != tt.want {
				t.Errorf("%v.Matches(%v) = %v, want %v", tt.sel, tt.res, got, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	// As Discover returns them: the preferred version of each group first.
	all := []Resource{pods, nodes, kexV1, kexLegacy, podMetrics, kexV1beta1}
	tests := []struct {
		name    string
		all     []Resource
		sel     Selector
		want    Resource
		wantErr error
		errText string
	}{
		{name: "unique by plural", all: all, sel: Selector{Name: "nodes"}, want: nodes},
		{name: "unique by short name", all: all, sel: Selector{Name: "no"}, want: nodes},
		{name: "group given: preferred (first) version",
			all: all, sel: Selector{Group: "kopf.dev", Name: "kopfexamples"}, want: kexV1},
		{name: "group given, later version listed first is preferred",
			all: []Resource{kexV1beta1, kexV1}, sel: Selector{Group: "kopf.dev", Name: "kopfexamples"}, want: kexV1beta1},
		{name: "explicit version",
			all: all, sel: Selector{Group: "kopf.dev", Version: "v1beta1", Name: "kex"}, want: kexV1beta1},
		{name: "core group wins over other groups",
			all: all, sel: Selector{Name: "pods"}, want: pods},
		{name: "core group wins wherever it is listed",
			all: []Resource{podMetrics, pods}, sel: Selector{Name: "pods"}, want: pods},
		{name: "a group given excludes the core group",
			all: all, sel: Selector{Group: "metrics.k8s.io", Name: "pods"}, want: podMetrics},
		{name: "versions of one group are not ambiguous",
			all: []Resource{kexV1, kexV1beta1}, sel: Selector{Name: "kex"}, want: kexV1},
		{name: "several non-core groups are ambiguous",
			all: all, sel: Selector{Name: "kopfexamples"},
			wantErr: ErrAmbiguous,
			errText: "several resources match kopfexamples: kopfexamples.v1.kopf.dev, kopfexamples.v1.zalando.org"},
		{name: "not found",
			all: all, sel: Selector{Group: "kopf.dev", Name: "deployments"},
			wantErr: ErrNotFound, errText: "no resource matches kopf.dev/deployments"},
		{name: "version not served",
			all: all, sel: Selector{Group: "kopf.dev", Version: "v2", Name: "kopfexamples"},
			wantErr: ErrNotFound, errText: "no resource matches kopf.dev/v2/kopfexamples"},
		{name: "nothing discovered",
			all: nil, sel: Selector{Name: "pods"},
			wantErr: ErrNotFound, errText: "no resource matches pods"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.all, tt.sel)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Resolve() error = %v, want %v", err, tt.wantErr)
				}
				if err.Error() != tt.errText {
					t.Errorf("Resolve() error text = %q, want %q", err.Error(), tt.errText)
				}
				if got.Plural != "" {
					t.Errorf("Resolve() = %v with an error, want the zero Resource", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve() error = %v", err)
			}
			if got.String() != tt.want.String() || got.Kind != tt.want.Kind {
				t.Errorf("Resolve() = %v (%s), want %v (%s)", got, got.Kind, tt.want, tt.want.Kind)
			}
		})
	}
}

func TestEverything(t *testing.T) {
	watchable := []string{"get", "list", "watch"}
	tests := []struct {
		sel  Selector
		res  Resource
		want bool
	}{
		{Selector{Name: Everything}, Resource{Version: "v1", Plural: "pods", Verbs: watchable}, true},
		{Selector{Name: Everything}, Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Verbs: watchable}, true},
		{Selector{Name: Everything}, Resource{Version: "v1", Plural: "events", Verbs: watchable}, false},
		{Selector{Name: Everything}, Resource{Group: "events.k8s.io", Version: "v1", Plural: "events", Verbs: watchable}, false},
		{Selector{Name: Everything}, Resource{Group: "authorization.k8s.io", Version: "v1", Plural: "subjectaccessreviews", Verbs: []string{"create"}}, false},
		{Selector{Group: "kopf.dev", Name: Everything}, Resource{Version: "v1", Plural: "pods", Verbs: watchable}, false},
		{Selector{Group: "kopf.dev", Name: Everything}, Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Verbs: watchable}, true},
		{Selector{Version: "v1", Core: true, Name: Everything}, Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Verbs: watchable}, false},
	}
	for _, tt := range tests {
		if got := tt.sel.Matches(tt.res); got != tt.want {
			t.Errorf("%v matches %v = %v, want %v", tt.sel, tt.res, got, tt.want)
		}
	}
	all := []Resource{
		{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Verbs: watchable},
		{Group: "kopf.dev", Version: "v1beta1", Plural: "kopfexamples", Verbs: watchable},
		{Version: "v1", Plural: "pods", Verbs: watchable},
	}
	if got := ResolveAll(all, Selector{Name: Everything}); len(got) != 2 || got[0].Version != "v1" {
		t.Errorf("ResolveAll = %v, want one version per resource, the first listed", got)
	}
}
