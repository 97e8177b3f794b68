package hierarchies_test

import (
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	h "github.com/kopf-go/kopf/runtime/hierarchies"
)

func ref(owner map[string]any, controller, block bool) map[string]any {
	md := owner["metadata"].(map[string]any)
	return map[string]any{
		"controller": controller, "blockOwnerDeletion": block,
		"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": md["name"], "uid": md["uid"],
	}
}

// ownerWith returns Kopf's test owner with some fields replaced.
func ownerWith(kind, name, uid string) map[string]any {
	b := ownerBody()
	md := b["metadata"].(map[string]any)
	if kind != "" {
		b["kind"] = kind
	}
	if name != "" {
		md["name"] = name
	}
	if uid != "" {
		md["uid"] = uid
	}
	return b
}

// test_owner_referencing.py
func TestOwnerReferences(t *testing.T) {
	o := map[string]any(ownerBody())
	a, b, c := ownerWith("", "", "uid-a"), ownerWith("", "", "uid-b"), ownerWith("", "", "uid-c")
	sameUID := []map[string]any{ownerWith("KindA", "name-a", "uid-0"), ownerWith("KindA", "name-b", "uid-0"), ownerWith("KindB", "name-b", "uid-0")}
	type step struct {
		remove bool
		owner  map[string]any
		opts   []h.OwnerReferenceOption
	}
	tests := []struct {
		name  string
		in    map[string]any
		steps []step
		want  map[string]any
	}{
		{"appending with defaults", nil, []step{{owner: o}},
			metadata(map[string]any{"ownerReferences": []any{ref(o, true, true)}})},
		{"appending with options", nil, []step{{owner: o, opts: []h.OwnerReferenceOption{h.Controller(false), h.BlockOwnerDeletion(false)}}},
			metadata(map[string]any{"ownerReferences": []any{ref(o, false, false)}})},
		{"appending to existing references", metadata(map[string]any{"ownerReferences": []any{ref(a, false, true)}}), []step{{owner: o}},
			metadata(map[string]any{"ownerReferences": []any{ref(a, false, true), ref(o, true, true)}})},
		{"appending deduplicates by uid", nil, []step{{owner: sameUID[0]}, {owner: sameUID[1]}, {owner: sameUID[2]}},
			metadata(map[string]any{"ownerReferences": []any{ref(sameUID[0], true, true)}})},
		{"appending distinguishes by uid", nil, []step{{owner: a}, {owner: b}},
			metadata(map[string]any{"ownerReferences": []any{ref(a, true, true), ref(b, true, true)}})},
		{"removal", nil, []step{{owner: o}, {remove: true, owner: o}},
			metadata(map[string]any{})},
		{"removal of an absent reference", metadata(map[string]any{"name": "x"}), []step{{remove: true, owner: o}},
			metadata(map[string]any{"name": "x"})},
		{"removal identifies by uid", nil, []step{{owner: sameUID[0]}, {owner: sameUID[1]}, {owner: sameUID[2]}, {remove: true, owner: sameUID[0]}},
			metadata(map[string]any{})},
		{"removal distinguishes by uid", nil, []step{{owner: a}, {owner: b}, {owner: c}, {remove: true, owner: a}},
			metadata(map[string]any{"ownerReferences": []any{ref(b, true, true), ref(c, true, true)}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runForms(t, tt.in, tt.want, func(objs any) error {
				for _, s := range tt.steps {
					owner := h.OwnerOfBody(s.owner)
					var err error
					if s.remove {
						err = h.RemoveOwnerReference(objs, owner)
					} else {
						err = h.AppendOwnerReference(objs, owner, s.opts...)
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

// Kopf leaves an empty list of owner references in a dict after removal.
func TestRemovalLeavesAnEmptyList(t *testing.T) {
	owner := h.OwnerOfBody(ownerBody())
	obj := map[string]any{}
	if err := h.AppendOwnerReference(obj, owner); err != nil {
		t.Fatal(err)
	}
	if err := h.RemoveOwnerReference(obj, owner); err != nil {
		t.Fatal(err)
	}
	refs, ok := obj["metadata"].(map[string]any)["ownerReferences"].([]any)
	if !ok || len(refs) != 0 {
		t.Errorf("ownerReferences is %#v, want an empty list", obj["metadata"])
	}
}

// test_labelling.py
func TestLabel(t *testing.T) {
	labels := map[string]string{"label-1": "value-1", "label-2": "value-2"}
	withLabels := func(l map[string]any) map[string]any { return metadata(map[string]any{"labels": l}) }
	old := withLabels(map[string]any{"label": "old-value"})
	tests := []struct {
		name   string
		in     map[string]any
		labels map[string]string
		opts   []h.LabelOption
		want   map[string]any
	}{
		{"adding without metadata", nil, labels, nil, withLabels(map[string]any{"label-1": "value-1", "label-2": "value-2"})},
		{"adding to other labels", withLabels(map[string]any{"other": "x"}), labels, nil,
			withLabels(map[string]any{"other": "x", "label-1": "value-1", "label-2": "value-2"})},
		{"forced true", old, map[string]string{"label": "new-value"}, []h.LabelOption{h.Forced(true)}, withLabels(map[string]any{"label": "new-value"})},
		{"forced false", old, map[string]string{"label": "new-value"}, []h.LabelOption{h.Forced(false)}, old},
		{"forced default", old, map[string]string{"label": "new-value"}, nil, old},
		{"no labels", old, nil, nil, old},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runForms(t, tt.in, tt.want, func(objs any) error { return h.Label(objs, tt.labels, tt.opts...) })
		})
	}
}

// test_labelling.py: nested, on Kopf's CronJob with a jobTemplate; and the
// reference's example: nested structures absent from some children.
func TestLabelNested(t *testing.T) {
	obj := func() map[string]any {
		return map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"label": "old-value"}},
			"spec":     map[string]any{"jobTemplate": map[string]any{}},
		}
	}
	want := func(root string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"label": root}},
			"spec":     map[string]any{"jobTemplate": map[string]any{"metadata": map[string]any{"labels": map[string]any{"label": "new-value"}}}},
		}
	}
	for _, nested := range []h.Nested{{"spec.jobTemplate", "spec.unexistent"}, {"spec.jobTemplate"}, {"spec.unexistent", "spec.jobTemplate", "unexistent.deeper"}} {
		for _, forced := range []bool{true, false} {
			root := "old-value"
			if forced {
				root = "new-value"
			}
			t.Run(fmt.Sprintf("%v/forced=%v", nested, forced), func(t *testing.T) {
				runForms(t, obj(), want(root), func(objs any) error {
					return h.Label(objs, map[string]string{"label": "new-value"}, nested, h.Forced(forced))
				})
			})
		}
	}

	// The absent structures are not created.
	job := map[string]any{"kind": "Job"}
	if err := h.Label(job, map[string]string{"label1": "value1"}, h.Nested{"spec.template"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := job["spec"]; ok {
		t.Errorf("an absent nested structure was created: %v", job)
	}
}

func TestLabelNestedTyped(t *testing.T) {
	labels := map[string]string{"somelabel": "somevalue"}
	deployment := &appsv1.Deployment{}
	// A pointer on the way (Job's spec.template via the CronJob's spec.jobTemplate.spec).
	cronJob := &batchv1.CronJob{}
	if err := h.Label([]any{deployment, cronJob}, labels, h.Nested{"spec.template", "spec.jobTemplate.spec.template", "spec.selector"}); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]map[string]string{
		"deployment":                 deployment.Labels,
		"deployment's spec.template": deployment.Spec.Template.Labels,
		"cronjob":                    cronJob.Labels,
		"cronjob's spec.jobTemplate.spec.template": cronJob.Spec.JobTemplate.Spec.Template.Labels,
	} {
		if !reflect.DeepEqual(got, labels) {
			t.Errorf("%s has labels %v", name, got)
		}
	}
	// A nil pointer (the Deployment's spec.selector) is absent: skipped.
	if deployment.Spec.Selector != nil {
		t.Errorf("a nil pointer was filled: %v", deployment.Spec.Selector)
	}

	// Through a map to an untyped object, and to a typed one by pointer.
	type custom struct {
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Children          map[string]any                `json:"children"`
		Pods              map[string]*corev1.Pod        `json:"pods"`
		Values            map[string]corev1.PodTemplate `json:"values"`
		Name              string                        `json:"name"`
	}
	cu := &custom{
		Children: map[string]any{"first": map[string]any{}},
		Pods:     map[string]*corev1.Pod{"pod": {}},
		Values:   map[string]corev1.PodTemplate{"tpl": {}},
	}
	if err := h.Label(cu, labels, h.Nested{"children.first", "pods.pod", "children.absent", "pods.absent"}); err != nil {
		t.Fatal(err)
	}
	if got := cu.Children["first"].(map[string]any)["metadata"].(map[string]any)["labels"]; !reflect.DeepEqual(got, map[string]any{"somelabel": "somevalue"}) {
		t.Errorf("the untyped nested object has labels %v", got)
	}
	if got := cu.Pods["pod"].Labels; !reflect.DeepEqual(got, labels) {
		t.Errorf("the typed nested object has labels %v", got)
	}

	// Errors: nested values that cannot be labelled; nothing is changed.
	for _, path := range []string{"values.tpl", "name.deeper", "name"} {
		fresh := &custom{Values: map[string]corev1.PodTemplate{"tpl": {}}}
		err := h.Label(fresh, labels, h.Nested{path})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("nested %s: error %v, want one naming the path", path, err)
		}
		if fresh.Labels != nil {
			t.Errorf("nested %s: the object was labelled despite the error", path)
		}
	}
}

func TestLabelNestedErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		obj    map[string]any
		nested string
	}{
		{"a string on the way", map[string]any{"spec": "text"}, "spec.template"},
		{"a list at the end", map[string]any{"spec": map[string]any{"template": []any{}}}, "spec.template"},
		{"a string at the end", map[string]any{"spec": map[string]any{"template": "text"}}, "spec.template"},
		{"an empty path", map[string]any{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := h.Label(tt.obj, map[string]string{"l": "v"}, h.Nested{tt.nested})
			if err == nil {
				t.Fatal("no error")
			}
			if _, ok := tt.obj["metadata"]; ok {
				t.Errorf("the object was changed despite the error: %v", tt.obj)
			}
		})
	}
	// A null is absent.
	obj := map[string]any{"spec": map[string]any{"template": nil}}
	if err := h.Label(obj, map[string]string{"l": "v"}, h.Nested{"spec.template"}); err != nil {
		t.Errorf("a null nested value: %v", err)
	}
}

// test_name_harmonizing.py
func TestHarmonizeNaming(t *testing.T) {
	withNames := []map[string]any{
		metadata(map[string]any{"name": "a"}),
		metadata(map[string]any{"generateName": "b"}),
		metadata(map[string]any{"name": "c", "generateName": "d"}),
	}
	withoutNames := []map[string]any{nil, metadata(map[string]any{})}
	strictName := metadata(map[string]any{"name": "provided-name"})
	relaxedName := metadata(map[string]any{"generateName": "provided-name-"})
	type mode struct {
		name string
		opts []h.NamingOption
	}
	nonForced := []mode{{"forcedFalse", []h.NamingOption{h.Forced(false)}}, {"forcedAbsent", nil}}
	forced := []mode{{"forcedTrue", []h.NamingOption{h.Forced(true)}}}
	strict := []mode{{"strictTrue", []h.NamingOption{h.Strict(true)}}}
	nonStrict := []mode{{"strictFalse", []h.NamingOption{h.Strict(false)}}, {"strictAbsent", nil}}
	anyStrict := append(strict, nonStrict...)
	anyForced := append(forced, nonForced...)

	type group struct {
		name             string
		objs             []map[string]any
		forced, strictly []mode
		want             func(in map[string]any) map[string]any
	}
	for _, g := range []group{
		// In the non-forced mode, the existing names are preserved.
		{"preserved", withNames, nonForced, anyStrict, func(in map[string]any) map[string]any { return in }},
		// In the forced mode, the existing names are overwritten.
		{"overwriting strict", withNames, forced, strict, func(map[string]any) map[string]any { return strictName }},
		{"overwriting relaxed", withNames, forced, nonStrict, func(map[string]any) map[string]any { return relaxedName }},
		// When names are absent, they are added regardless of the forced mode.
		{"assignment strict", withoutNames, anyForced, strict, func(map[string]any) map[string]any { return strictName }},
		{"assignment relaxed", withoutNames, anyForced, nonStrict, func(map[string]any) map[string]any { return relaxedName }},
	} {
		for i, in := range g.objs {
			for _, f := range g.forced {
				for _, s := range g.strictly {
					t.Run(fmt.Sprintf("%s/%d/%s/%s", g.name, i, f.name, s.name), func(t *testing.T) {
						opts := append(append([]h.NamingOption{}, f.opts...), s.opts...)
						runForms(t, in, g.want(in), func(objs any) error { return h.HarmonizeNaming(objs, "provided-name", opts...) })
					})
				}
			}
		}
	}
}

// test_namespace_adjusting.py
func TestAdjustNamespace(t *testing.T) {
	with := metadata(map[string]any{"namespace": "a"})
	provided := metadata(map[string]any{"namespace": "provided-namespace"})
	tests := []struct {
		name      string
		in        map[string]any
		namespace string
		opts      []h.NamespaceOption
		want      map[string]any
	}{
		{"preserved, forced false", with, "provided-namespace", []h.NamespaceOption{h.Forced(false)}, with},
		{"preserved, forced absent", with, "provided-namespace", nil, with},
		{"overwritten, forced true", with, "provided-namespace", []h.NamespaceOption{h.Forced(true)}, provided},
		{"assigned without metadata", nil, "provided-namespace", nil, provided},
		{"assigned without namespace", metadata(map[string]any{}), "provided-namespace", []h.NamespaceOption{h.Forced(false)}, provided},
		{"assigned, forced true", nil, "provided-namespace", []h.NamespaceOption{h.Forced(true)}, provided},
		// A cluster-scoped owner: no namespace.
		{"cluster-scoped, preserved", with, "", nil, with},
		{"cluster-scoped, forced", with, "", []h.NamespaceOption{h.Forced(true)}, metadata(map[string]any{})},
		{"cluster-scoped, absent", nil, "", nil, metadata(map[string]any{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runForms(t, tt.in, tt.want, func(objs any) error { return h.AdjustNamespace(objs, tt.namespace, tt.opts...) })
		})
	}
}

// test_owner_referencing.py's test_adopting, checking the effects of the
// four functions rather than their calls.
func TestAdopt(t *testing.T) {
	o := map[string]any(ownerBody())
	existing := map[string]any{
		"metadata": map[string]any{"name": "own-name", "namespace": "own-namespace", "labels": map[string]any{"label-1": "own-value"}},
		"spec":     map[string]any{"jobTemplate": map[string]any{}},
	}
	for _, forced := range []bool{true, false} {
		for _, strict := range []bool{true, false} {
			t.Run(fmt.Sprintf("forced=%v/strict=%v", forced, strict), func(t *testing.T) {
				md := map[string]any{
					"name": "own-name", "namespace": "own-namespace",
					"labels":          map[string]any{"label-1": "own-value", "label-2": "value-2"},
					"ownerReferences": []any{ref(o, true, true)},
				}
				nestedLabels := map[string]any{"label-1": "value-1", "label-2": "value-2"}
				if forced {
					md["namespace"] = ownerNamespace
					md["labels"] = nestedLabels
					if strict {
						md["name"] = ownerName
					} else {
						delete(md, "name")
						md["generateName"] = ownerName + "-"
					}
				}
				want := map[string]any{
					"metadata": md,
					"spec":     map[string]any{"jobTemplate": map[string]any{"metadata": map[string]any{"labels": nestedLabels}}},
				}
				runForms(t, existing, want, func(objs any) error {
					return h.Adopt(objs, h.OwnerOfBody(o), h.Forced(forced), h.Strict(strict), h.Nested{"spec.jobTemplate"})
				})
			})
		}
	}
	t.Run("new children", func(t *testing.T) {
		want := metadata(map[string]any{
			"generateName": ownerName + "-", "namespace": ownerNamespace,
			"labels":          map[string]any{"label-1": "value-1", "label-2": "value-2"},
			"ownerReferences": []any{ref(o, true, true)},
		})
		runForms(t, nil, want, func(objs any) error { return h.Adopt(objs, h.OwnerOfBody(o)) })
	})
}

// test_type_validation.py, and nothing is changed when one child is wrong.
func TestUnsupported(t *testing.T) {
	owner := h.OwnerOfBody(ownerBody())
	calls := map[string]func(objs any) error{
		"AppendOwnerReference": func(objs any) error { return h.AppendOwnerReference(objs, owner) },
		"RemoveOwnerReference": func(objs any) error { return h.RemoveOwnerReference(objs, owner) },
		"Label":                func(objs any) error { return h.Label(objs, map[string]string{"l": "v"}) },
		"HarmonizeNaming":      func(objs any) error { return h.HarmonizeNaming(objs, "x") },
		"AdjustNamespace":      func(objs any) error { return h.AdjustNamespace(objs, "x") },
		"Adopt":                func(objs any) error { return h.Adopt(objs, owner) },
	}
	bad := []any{
		struct{}{}, 42, "text",
		corev1.Pod{},                  // a value: cannot be changed in place
		[1]corev1.Pod{},               // an array by value
		[]any{corev1.Pod{}},           // a value in an interface
		map[string]any{"metadata": 1}, // not an object's structure
		map[string]any{"metadata": map[string]any{"labels": []any{}}},
		map[string]any{"metadata": map[string]any{"ownerReferences": map[string]any{}}},
	}
	for name, call := range calls {
		for _, b := range bad {
			t.Run(fmt.Sprintf("%s/%T", name, b), func(t *testing.T) {
				good := map[string]any{}
				pod := &corev1.Pod{}
				err := call([]any{good, pod, b})
				if !errors.Is(err, h.ErrUnsupported) || !strings.Contains(err.Error(), "K8s object class is not supported") {
					t.Fatalf("error %v, want ErrUnsupported", err)
				}
				if len(good) != 0 || !reflect.DeepEqual(pod, &corev1.Pod{}) {
					t.Errorf("children were changed despite the error: %v, %v", good, pod)
				}
			})
		}
	}
}

// In place: elements of slices of structs, list objects, nil children.
func TestChildrenInPlace(t *testing.T) {
	owner := h.OwnerOfBody(ownerBody())
	pods := []corev1.Pod{{}, {}}
	podList := &corev1.PodList{Items: []corev1.Pod{{}}}
	uList := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{{}}}
	var nilPod *corev1.Pod
	uObjs := []unstructured.Unstructured{{Object: map[string]any{}}}
	if err := h.Adopt([]any{pods, podList, uList, nil, nilPod, &uObjs, []map[string]any{nil}}, owner); err != nil {
		t.Fatal(err)
	}
	for i, p := range append(pods, podList.Items...) {
		if p.Namespace != ownerNamespace || p.GenerateName != ownerName+"-" || len(p.OwnerReferences) != 1 {
			t.Errorf("pod %d was not adopted: %+v", i, p.ObjectMeta)
		}
	}
	for i, u := range append(uList.Items, uObjs...) {
		if u.GetNamespace() != ownerNamespace || len(u.GetOwnerReferences()) != 1 {
			t.Errorf("unstructured %d was not adopted: %v", i, u.Object)
		}
	}
}

// Adopt passes over its children once: a single-use iterator works.
func TestAdoptIteratesOnce(t *testing.T) {
	children := []*corev1.Pod{{}, {}}
	used := false
	var once iter.Seq[*corev1.Pod] = func(yield func(*corev1.Pod) bool) {
		if used {
			return
		}
		used = true
		for _, c := range children {
			if !yield(c) {
				return
			}
		}
	}
	if err := h.Adopt(once, h.OwnerOfBody(ownerBody())); err != nil {
		t.Fatal(err)
	}
	for i, p := range children {
		if len(p.OwnerReferences) != 1 || p.Labels["label-1"] != "value-1" || p.Namespace != ownerNamespace {
			t.Errorf("pod %d was not adopted: %+v", i, p.ObjectMeta)
		}
	}
}

func TestOwners(t *testing.T) {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u", Labels: map[string]string{"a": "b"}},
	}
	want := h.Owner{APIVersion: "v1", Kind: "Pod", Name: "p", Namespace: "ns", UID: "u", Labels: map[string]string{"a": "b"}}
	if got := h.OwnerOf(pod); !reflect.DeepEqual(got, want) {
		t.Errorf("OwnerOf: %+v", got)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetName("p")
	u.SetNamespace("ns")
	u.SetUID("u")
	u.SetLabels(map[string]string{"a": "b"})
	if got := h.OwnerOf(u); !reflect.DeepEqual(got, want) {
		t.Errorf("OwnerOf(unstructured): %+v", got)
	}
	if got := h.OwnerOfBody(u.Object); !reflect.DeepEqual(got, want) {
		t.Errorf("OwnerOfBody: %+v", got)
	}
	pod.TypeMeta = metav1.TypeMeta{}
	if got := h.OwnerOfKind(pod, corev1.SchemeGroupVersion.WithKind("Pod")); !reflect.DeepEqual(got, want) {
		t.Errorf("OwnerOfKind: %+v", got)
	}
	deployment := h.OwnerOfKind(&appsv1.Deployment{}, appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if deployment.APIVersion != "apps/v1" || deployment.Kind != "Deployment" {
		t.Errorf("OwnerOfKind(apps/v1): %+v", deployment)
	}
	if r := want.Reference(h.Controller(false)); *r.Controller || !*r.BlockOwnerDeletion || r.UID != "u" || r.Kind != "Pod" {
		t.Errorf("Reference: %+v", r)
	}

	// Without its TypeMeta, a typed object's kind is unknown.
	err := h.Adopt(&corev1.Pod{}, h.OwnerOf(pod))
	var oe *h.OwnerError
	if !errors.As(err, &oe) || !reflect.DeepEqual(oe.Missing, []string{"apiVersion", "kind"}) || !strings.Contains(err.Error(), "OwnerOfKind") {
		t.Errorf("error %v, want an OwnerError naming apiVersion and kind", err)
	}
}

// test_contextual_owner.py's cases with an empty owner: Go has no implicit
// owner, but an empty one is refused before any change.
func TestEmptyOwner(t *testing.T) {
	child := map[string]any{}
	for name, err := range map[string]error{
		"AppendOwnerReference": h.AppendOwnerReference(child, h.Owner{}),
		"RemoveOwnerReference": h.RemoveOwnerReference(child, h.Owner{}),
		"HarmonizeNaming":      h.HarmonizeNaming(child, ""),
		"Adopt":                h.Adopt(child, h.Owner{}),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if len(child) != 0 {
		t.Errorf("the child was changed: %v", child)
	}
}
