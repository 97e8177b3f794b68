// Package packaging checks what docs/deploying.md promises to users who
// install an operator with kustomize or Helm: in a temporary directory, an
// operator scaffolded by `kopf-gen init` (with admission webhooks, in a
// namespace of its own) renders
//
//   - its config/default into one install.yaml with `kopf-gen kustomize`
//     (the scaffold's `make build-installer`), the image replaced;
//   - its Helm chart (dist/chart, written by kopf-gen's generation) with
//     Helm's own library, as `helm template` does, with the chart's default
//     values and with others;
//
// and every object of each is applied server-side (with a field manager)
// to a real kube-apiserver (envtest), which validates it: a rendered
// object that the API server refuses fails the test. The assertions read
// the objects back from the API server: the values reach the Deployment,
// and the webhooks' and metrics' objects are there only when switched on.
package packaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
)

// The scaffolded operator: its name (that of its Deployment, ClusterRole
// and chart), its namespace, the field manager of the test's applies.
const (
	name         = "widget-operator"
	namespace    = "widgets-system"
	fieldManager = "kopf-go-e2e-packaging"
)

// run runs a command in dir and fails the test with its output if it
// fails.
func run(t *testing.T, dir string, cmdName string, args ...string) string {
	t.Helper()
	cmd := exec.Command(cmdName, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", cmdName, strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

// scaffold builds kopf-gen from this checkout and scaffolds an operator
// with webhooks; it returns kopf-gen and the operator's directory.
func scaffold(t *testing.T) (kopfGen, dir string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	kopfGen = filepath.Join(work, "kopf-gen")
	if err := cluster.BuildKopfGen(root, kopfGen); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(work, name)
	run(t, work, kopfGen, "init", dir, "--module", "example.com/"+name, "--group", "example.com",
		"--version", "v1alpha1", "--kind", "Widget", "--webhooks", "--namespace", namespace, "--kopf-replace", root)
	return kopfGen, dir
}

func TestPackaging(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		if _, err := envtest.Assets(); err != nil {
			t.Fatalf("no control plane (make controlplane, or KUBEBUILDER_ASSETS): %v", err)
		}
	}
	kopfGen, dir := scaffold(t)
	env := envtest.Start(t)
	ctx := t.Context()
	k := newKube(t, env.Config)

	t.Run("install.yaml", func(t *testing.T) {
		run(t, dir, kopfGen, "kustomize", "config/default", "--image", name+"=registry.example.com/widget-operator:v1.2.3", "-o", "dist/install.yaml")
		manifest, err := os.ReadFile(filepath.Join(dir, "dist", "install.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := k.apply(ctx, manifest); err != nil {
			t.Fatal(err)
		}
		k.mustGet(ctx, "v1", "namespaces", "", namespace)
		k.mustGet(ctx, "apiextensions.k8s.io/v1", "customresourcedefinitions", "", "widgets.example.com")
		k.mustGet(ctx, "v1", "services", namespace, "kopf-webhooks")
		k.mustGet(ctx, "rbac.authorization.k8s.io/v1", "rolebindings", namespace, name+"-webhooks")
		d := k.mustGet(ctx, "apps/v1", "deployments", namespace, name)
		checkOperator(t, d, operatorWant{image: "registry.example.com/widget-operator:v1.2.3", replicas: 1, webhooks: true, metrics: true})
	})

	for _, tc := range []struct {
		name, releaseNamespace, namespace string
		values                            map[string]any
		want                              operatorWant
	}{{
		name: "chart defaults", releaseNamespace: "widgets-helm", namespace: "widgets-helm",
		want: operatorWant{image: name + ":latest", replicas: 1, memoryLimit: "256Mi", webhooks: true, metrics: true, crds: true},
	}, {
		name: "chart values", releaseNamespace: "ignored", namespace: "widgets-values",
		values: map[string]any{
			"image":     map[string]any{"repository": "registry.example.com/widgets/operator", "tag": "v9", "pullPolicy": "Always"},
			"replicas":  2,
			"resources": map[string]any{"limits": map[string]any{"memory": "1Gi"}},
			"namespace": "widgets-values",
			"crds":      map[string]any{"enable": false},
			"webhook":   map[string]any{"enable": false},
			"metrics":   map[string]any{"enable": false},
		},
		want: operatorWant{image: "registry.example.com/widgets/operator:v9", pullPolicy: "Always", replicas: 2, memoryLimit: "1Gi"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			manifest := renderChart(t, filepath.Join(dir, "dist", "chart"), tc.releaseNamespace, tc.values)
			if got := strings.Contains(manifest, "kind: CustomResourceDefinition\n"); got != tc.want.crds {
				t.Errorf("the rendered chart has a CRD: %v, want %v", got, tc.want.crds)
			}
			if err := k.apply(ctx, namespaceObject(tc.namespace)); err != nil { // helm install --create-namespace
				t.Fatal(err)
			}
			if err := k.apply(ctx, []byte(manifest)); err != nil {
				t.Fatalf("%v\n%s", err, manifest)
			}
			d := k.mustGet(ctx, "apps/v1", "deployments", tc.namespace, name)
			checkOperator(t, d, tc.want)
			b := k.mustGet(ctx, "rbac.authorization.k8s.io/v1", "clusterrolebindings", "", name)
			if subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects"); len(subjects) != 1 || subjects[0].(map[string]any)["namespace"] != tc.namespace {
				t.Errorf("the ClusterRoleBinding's subjects: %v, want the service account of %s", subjects, tc.namespace)
			}
			for _, o := range []struct{ apiVersion, resource, name string }{
				{"v1", "services", "kopf-webhooks"},
				{"rbac.authorization.k8s.io/v1", "roles", name + "-webhooks"},
				{"rbac.authorization.k8s.io/v1", "rolebindings", name + "-webhooks"},
			} {
				k.checkExists(ctx, t, o.apiVersion, o.resource, tc.namespace, o.name, tc.want.webhooks)
			}
			k.checkExists(ctx, t, "v1", "services", tc.namespace, name+"-metrics", tc.want.metrics)
		})
	}

	t.Run("the API server validates the chart's objects", func(t *testing.T) {
		manifest := renderChart(t, filepath.Join(dir, "dist", "chart"), "widgets-helm", map[string]any{"replicas": -1})
		err := k.apply(ctx, []byte(manifest))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas") {
			t.Errorf("applying a Deployment of -1 replicas: %v, want the API server's validation error", err)
		}
	})
}

// operatorWant is what the operator's Deployment has when applied.
type operatorWant struct {
	image, pullPolicy, memoryLimit string
	replicas                       int64
	webhooks, metrics, crds        bool
}

// checkOperator checks the Deployment as the API server stored it.
func checkOperator(t *testing.T, d *unstructured.Unstructured, want operatorWant) {
	t.Helper()
	if replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); replicas != want.replicas {
		t.Errorf("replicas %d, want %d", replicas, want.replicas)
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("containers: %v", containers)
	}
	c := containers[0].(map[string]any)
	if c["image"] != want.image {
		t.Errorf("image %v, want %s", c["image"], want.image)
	}
	if want.pullPolicy != "" && c["imagePullPolicy"] != want.pullPolicy {
		t.Errorf("imagePullPolicy %v, want %s", c["imagePullPolicy"], want.pullPolicy)
	}
	if limit, _, _ := unstructured.NestedString(c, "resources", "limits", "memory"); want.memoryLimit != "" && limit != want.memoryLimit {
		t.Errorf("memory limit %q, want %q", limit, want.memoryLimit)
	}
	ports := map[string]bool{}
	for _, p := range c["ports"].([]any) {
		ports[p.(map[string]any)["name"].(string)] = true
	}
	args := fmt.Sprint(c["args"])
	if ports["webhooks"] != want.webhooks || ports["metrics"] != want.metrics || strings.Contains(args, "--metrics-bind-address") != want.metrics || !ports["health"] {
		t.Errorf("ports %v and args %s, want webhooks %v, metrics %v", ports, args, want.webhooks, want.metrics)
	}
}

// renderChart renders the chart in dir as `helm template --include-crds
// -n namespace` does, with values over the chart's, and returns its
// objects in Helm's install order.
func renderChart(t *testing.T, dir, namespace string, values map[string]any) string {
	t.Helper()
	chrt, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &action.Configuration{Log: t.Logf}
	install := action.NewInstall(cfg)
	install.DryRun, install.DryRunOption, install.ClientOnly, install.Replace = true, "client", true, true
	install.ReleaseName, install.Namespace, install.IncludeCRDs = "widgets", namespace, true
	rel, err := install.Run(chrt, values)
	if err != nil {
		t.Fatalf("rendering the chart: %v", err)
	}
	return rel.Manifest
}

func namespaceObject(name string) []byte {
	return []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + "\n")
}

// kube applies manifests and reads objects back.
type kube struct {
	t      *testing.T
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newKube(t *testing.T, cfg *rest.Config) *kube {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &kube{t: t, dyn: dynamic.NewForConfigOrDie(cfg), mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

// apply applies every object of a multi-document manifest server-side, in
// order, with the test's field manager (taking over the fields that an
// earlier apply of another rendering owns).
func (k *kube) apply(ctx context.Context, manifest []byte) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("decoding the manifest: %w", err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		gvk := obj.GroupVersionKind()
		mapping, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("mapping %s: %w", gvk, err)
		}
		var ri dynamic.ResourceInterface = k.dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == "namespace" {
			if obj.GetNamespace() == "" {
				return fmt.Errorf("%s %s has no namespace", gvk.Kind, obj.GetName())
			}
			ri = k.dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		if _, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
		}
	}
}

func (k *kube) resource(apiVersion, resource, namespace string) dynamic.ResourceInterface {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		k.t.Fatal(err)
	}
	return k.dyn.Resource(gv.WithResource(resource)).Namespace(namespace)
}

func (k *kube) mustGet(ctx context.Context, apiVersion, resource, namespace, name string) *unstructured.Unstructured {
	k.t.Helper()
	o, err := k.resource(apiVersion, resource, namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		k.t.Fatalf("%s %s/%s: %v", resource, namespace, name, err)
	}
	return o
}

// checkExists checks that an object exists, or does not.
func (k *kube) checkExists(ctx context.Context, t *testing.T, apiVersion, resource, namespace, name string, want bool) {
	t.Helper()
	_, err := k.resource(apiVersion, resource, namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		t.Errorf("%s %s/%s: %v", resource, namespace, name, err)
	case (err == nil) != want:
		t.Errorf("%s %s/%s exists: %v, want %v", resource, namespace, name, err == nil, want)
	}
}
