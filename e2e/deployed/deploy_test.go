package deployed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/kopf-go/kopf/e2e/internal/proc"
)

// namespace is the scaffold's namespace (kopf-gen init's default): its
// ServiceAccount and Deployment are there, and the namespaced manifests
// that name none (the webhooks' Service and Role) are applied there, as
// `kubectl apply -n` would.
const namespace = "default"

// fieldManager is the manager of the test's server-side applies.
const fieldManager = "kopf-e2e-deployed"

// deployment is an example's operator as deployed.
type deployment struct {
	// name is the operator's: of its ServiceAccount, ClusterRole and
	// binding, and Deployment.
	name string
	// objects are the manifests of its config/ directory, as applied.
	objects []*unstructured.Unstructured
	// container is the Deployment's operator container.
	container corev1.Container
	// kubeconfig is a kubeconfig file with the server, its CA and a token
	// of the ServiceAccount, and nothing else.
	kubeconfig string
}

// user is the name by which the API server knows the operator.
func (d *deployment) user() string {
	return "system:serviceaccount:" + namespace + ":" + d.name
}

// deploy scaffolds a repository named after the example (kopf-gen init),
// generates the example's manifests into its config/ directory (kopf-gen
// generate --manifests), applies every manifest there server-side, and
// gets a token of the operator's ServiceAccount.
func deploy(t *testing.T, ex example) *deployment {
	t.Helper()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	args := []string{"init", repo, "--module", "example.com/" + ex.dir, "--group", "kopf.dev", "--version", "v1", "--kind", "KopfExample", "--skip-generate"}
	if ex.webhooks {
		args = append(args, "--webhooks")
	}
	kopfGen(t, dir, args...)
	config := filepath.Join(repo, "config")
	d := &deployment{name: serviceAccountName(t, config)}
	args = []string{"generate", "--manifests", config, "--role-name", d.name}
	if ex.peering {
		args = append(args, "--peering")
	}
	// The example's markers, with the Go type of its resource
	// (//kopf:resource, +kubebuilder markers), from which the CRD comes.
	// It also writes the examples' generated Go code, which is current
	// (make verify): nothing changes in the tree.
	kopfGen(t, filepath.Join(root, "examples"), append(args, "./"+ex.dir, "./apis/kopf/v1")...)

	d.objects = readManifests(t, config)
	applyAll(t, d.objects)
	d.container = operatorContainer(t, d.objects)
	d.kubeconfig = tokenKubeconfig(t, dir, d.name)
	return d
}

// kopfGen runs the built kopf-gen in dir.
func kopfGen(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bins, "kopf-gen"), args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kopf-gen %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// serviceAccountName is the name of the scaffold's ServiceAccount.
func serviceAccountName(t *testing.T, config string) string {
	t.Helper()
	objs := decodeFile(t, filepath.Join(config, "rbac", "service_account.yaml"))
	if len(objs) != 1 || objs[0].GetKind() != "ServiceAccount" {
		t.Fatalf("config/rbac/service_account.yaml holds %d objects, want one ServiceAccount", len(objs))
	}
	return objs[0].GetName()
}

// readManifests reads every object of the YAML files under config, except
// the samples (the user's objects) and kustomizations (kustomize's input,
// not objects), namespaced where they name no namespace.
func readManifests(t *testing.T, config string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	err := filepath.WalkDir(config, func(path string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && e.Name() == "samples":
			return filepath.SkipDir
		case e.IsDir() || filepath.Ext(path) != ".yaml" || e.Name() == "kustomization.yaml":
			return nil
		}
		objs = append(objs, decodeFile(t, path)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// decodeFile decodes the objects of a multi-document YAML file.
func decodeFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
}

// applyAll applies the objects server-side, as `kubectl apply
// --server-side -n default` would, CRDs first and each waited for: the API
// server validates every object (the Deployment's probes among them).
func applyAll(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(shared.Config)
	dc := discovery.NewDiscoveryClientForConfigOrDie(shared.Config)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	var crds, rest []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, obj)
		} else {
			rest = append(rest, obj)
		}
	}
	for _, obj := range append(crds, rest...) {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, obj.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			if obj.GetNamespace() == "" {
				obj.SetNamespace(namespace)
			}
			ri = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		force := true
		if _, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: &force}); err != nil {
			t.Fatalf("applying %s %s: %v", gvk.Kind, obj.GetName(), err)
		}
		if gvk.Kind == "CustomResourceDefinition" {
			waitServed(t, dc, obj)
			mapper.Reset()
		}
	}
}

// waitServed waits until the API server serves a CRD's resource.
func waitServed(t *testing.T, dc discovery.DiscoveryInterface, crd *unstructured.Unstructured) {
	t.Helper()
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version, _, _ := unstructured.NestedString(versions[0].(map[string]any), "name")
	poll(t, 30*time.Second, "the CRD "+crd.GetName()+" to be served", func() bool {
		list, err := dc.ServerResourcesForGroupVersion(group + "/" + version)
		if err != nil {
			return false
		}
		for _, r := range list.APIResources {
			if r.Name == plural {
				return true
			}
		}
		return false
	})
}

// operatorContainer returns the container of the applied Deployment.
func operatorContainer(t *testing.T, objs []*unstructured.Unstructured) corev1.Container {
	t.Helper()
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" {
			continue
		}
		var dep appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &dep); err != nil {
			t.Fatal(err)
		}
		if n := len(dep.Spec.Template.Spec.Containers); n != 1 {
			t.Fatalf("the Deployment has %d containers, want 1", n)
		}
		return dep.Spec.Template.Spec.Containers[0]
	}
	t.Fatal("no Deployment among the manifests")
	return corev1.Container{}
}

// tokenKubeconfig requests a token of the ServiceAccount (TokenRequest)
// and writes a kubeconfig into dir that holds only the server, its CA and
// that token.
func tokenKubeconfig(t *testing.T, dir, serviceAccount string) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(shared.Config)
	expiry := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token of the ServiceAccount %s: %v", serviceAccount, err)
	}
	data, err := shared.TokenKubeconfig(tr.Status.Token)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// operator is an example's binary started as the Deployment runs it.
type operator struct {
	*proc.Process
	// container is the Deployment's container that it stands for.
	container corev1.Container
	// ports maps the container's ports to the local ones that replace
	// them in its arguments.
	ports map[int32]int
}

// start runs the example's binary with the Deployment's arguments, its
// ports replaced by free local ones, then extra, with the ServiceAccount's
// kubeconfig as its only credentials.
func (d *deployment) start(t *testing.T, ex example, label string, extra ...string) *operator {
	t.Helper()
	op := &operator{container: d.container, ports: map[int32]int{}}
	args := make([]string, 0, len(d.container.Args)+len(extra))
	for _, arg := range d.container.Args {
		args = append(args, op.localPorts(t, arg))
	}
	home := t.TempDir()
	op.Process = proc.Start(t, filepath.Join(bins, ex.dir), proc.Options{
		Name: ex.dir + " " + label,
		Log:  filepath.Join(home, "operator.log"),
		// No other credentials: no in-cluster variables, no ~/.kube.
		Env:  []string{"KUBECONFIG=" + d.kubeconfig, "HOME=" + home},
		Args: append(args, extra...),
	})
	return op
}

// probes waits until the readiness and liveness probes that the
// Deployment declares pass.
func (op *operator) probes(t *testing.T) {
	t.Helper()
	op.probe(t, "readiness", op.container.ReadinessProbe, 60*time.Second)
	op.probe(t, "liveness", op.container.LivenessProbe, 10*time.Second)
}

// localPorts replaces the container's ports in an argument (0.0.0.0:8080,
// :8081) with free local ones (127.0.0.1:N).
func (op *operator) localPorts(t *testing.T, arg string) string {
	t.Helper()
	for _, p := range op.container.Ports {
		from := ":" + strconv.Itoa(int(p.ContainerPort))
		if !strings.HasSuffix(arg, from) && !strings.Contains(arg, from+"/") {
			continue
		}
		if op.ports[p.ContainerPort] == 0 {
			op.ports[p.ContainerPort] = freePort(t)
		}
		local := "127.0.0.1:" + strconv.Itoa(op.ports[p.ContainerPort])
		arg = strings.Replace(strings.Replace(arg, "0.0.0.0"+from, local, 1), "="+from, "="+local, 1)
	}
	return arg
}

// probe waits until an HTTP probe of the Deployment passes, called as the
// kubelet would call it, on the local port that replaces the container's.
func (op *operator) probe(t *testing.T, kind string, probe *corev1.Probe, timeout time.Duration) {
	t.Helper()
	if probe == nil || probe.HTTPGet == nil {
		t.Fatalf("the Deployment's container has no HTTP %s probe", kind)
	}
	port := probe.HTTPGet.Port.IntVal
	for _, p := range op.container.Ports {
		if p.Name != "" && p.Name == probe.HTTPGet.Port.StrVal {
			port = p.ContainerPort
		}
	}
	local, ok := op.ports[port]
	if !ok {
		t.Fatalf("the %s probe's port %s is none that the container's arguments listen on", kind, probe.HTTPGet.Port.String())
	}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", local, probe.HTTPGet.Path)
	var last string
	poll(t, timeout, "the "+kind+" probe "+url, func() bool {
		select {
		case <-op.Done():
			t.Fatalf("%s exited while waiting for its %s probe", op.Name, kind)
		default:
		}
		resp, err := http.Get(url)
		if err != nil {
			last = err.Error()
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		last = resp.Status + ": " + string(body)
		return resp.StatusCode == http.StatusOK
	}, func() string { return last })
}

// freePort returns a port that is free at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// poll checks cond every 50 ms until it holds, and fails the test after
// the timeout with what it waited for (and the last state that details
// return, if given).
func poll(t *testing.T, timeout time.Duration, what string, cond func() bool, details ...func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("timed out after %s waiting for %s", timeout, what)
			for _, d := range details {
				msg += ": " + d()
			}
			t.Fatal(msg)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
