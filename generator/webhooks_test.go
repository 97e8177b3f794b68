package generator

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/kopf-go/kopf/generator/manifests"
)

const webhookHandlers = `package ops

import "context"

//kopf:on.validate kopf.dev/v1/kopfexamples
func Check(ctx context.Context, kw CheckKwargs) error { return nil }

//kopf:on.mutate kopf.dev/v1/kopfexamples operations=[CREATE]
func Fill(ctx context.Context, kw FillKwargs) error { return nil }

//kopf:on.create kopf.dev/v1/kopfexamples
func Create(ctx context.Context, kw CreateKwargs) error { return nil }
`

// TestWebhookManifests generates the manifests of a package with
// admission webhook handlers: the Service and the Role of the
// certificate Secret (compared with testdata/manifests/webhook/, which go
// test -update rewrites, and decoded as the API's types), the rules of the
// managed configurations in the ClusterRole (and no rule of the webhooks'
// resource); and removes the two files once the handlers are gone.
func TestWebhookManifests(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages")
	}
	ctx := context.Background()
	dir := testModule(t, map[string]string{"ops/ops.go": webhookHandlers})
	opts := Options{Dir: dir, Manifests: "config"}
	files, _, err := Generate(ctx, opts)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	got := map[string][]byte{}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f.Path)
		got[filepath.ToSlash(rel)] = f.Want
	}
	for rel, golden := range map[string]string{
		"config/webhook/service.yaml":   "testdata/manifests/webhook/service.yaml",
		"config/rbac/webhook_role.yaml": "testdata/manifests/webhook/webhook_role.yaml",
		"config/rbac/role.yaml":         "testdata/manifests/webhook/role.yaml",
	} {
		content, ok := got[rel]
		if !ok {
			t.Fatalf("%s is not generated; files: %v", rel, reflect.ValueOf(got).MapKeys())
		}
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if string(content) != string(want) {
			d, _ := Diff(File{Path: rel, Have: want, Want: content}, rel)
			t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", rel, golden, d)
		}
	}

	var svc corev1.Service
	if err := yaml.UnmarshalStrict(got["config/webhook/service.yaml"], &svc); err != nil {
		t.Fatalf("the Service: %v", err)
	}
	wantPort := corev1.ServicePort{Name: manifests.WebhookPortName, Port: manifests.WebhookServicePort,
		TargetPort: intstr.FromInt32(manifests.WebhookTargetPort), Protocol: corev1.ProtocolTCP}
	if svc.Name != "kopf-webhooks" || svc.Namespace != "" || !reflect.DeepEqual(svc.Spec.Ports, []corev1.ServicePort{wantPort}) ||
		!reflect.DeepEqual(svc.Spec.Selector, map[string]string{"app.kubernetes.io/name": "bench-operator"}) {
		t.Errorf("the Service: %+v", svc)
	}
	var role rbacv1.Role
	if err := yaml.UnmarshalStrict(got["config/rbac/webhook_role.yaml"], &role); err != nil {
		t.Fatalf("the Role: %v", err)
	}
	wantRules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"kopf-webhook-cert"}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
	}
	if role.Name != "bench-operator-webhooks" || !reflect.DeepEqual(role.Rules, wantRules) {
		t.Errorf("the Role: %+v", role)
	}
	var cluster rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(got["config/rbac/role.yaml"], &cluster); err != nil {
		t.Fatalf("the ClusterRole: %v", err)
	}
	wantCluster := []rbacv1.PolicyRule{
		{APIGroups: []string{"kopf.dev"}, Resources: []string{"kopfexamples"}, Verbs: []string{"list", "watch", "patch"}},
		{APIGroups: []string{"kopf.dev"}, Resources: []string{"kopfexamples/status"}, Verbs: []string{"patch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"},
			Verbs: []string{"get", "create", "patch", "update"}},
	}
	if !reflect.DeepEqual(cluster.Rules, wantCluster) {
		t.Errorf("the ClusterRole's rules:\n%+v\nwant:\n%+v", cluster.Rules, wantCluster)
	}

	// Without webhook handlers, the generated files are removed.
	if _, err := Write(files); err != nil {
		t.Fatal(err)
	}
	noWebhooks := strings.Join(strings.Split(webhookHandlers, "\n")[:3], "\n") + "\n" + strings.Join(strings.Split(webhookHandlers, "\n")[9:], "\n")
	if err := os.WriteFile(filepath.Join(dir, "ops", "ops.go"), []byte(noWebhooks), 0o644); err != nil {
		t.Fatal(err)
	}
	again, _, err := Generate(ctx, opts)
	if err != nil {
		t.Fatalf("Generate without webhooks: %v", err)
	}
	removed := map[string]bool{}
	for _, f := range again {
		rel, _ := filepath.Rel(dir, f.Path)
		if f.Want == nil {
			removed[filepath.ToSlash(rel)] = true
		}
		if strings.HasSuffix(rel, "role.yaml") && strings.Contains(string(f.Want), "admissionregistration") {
			t.Errorf("%s keeps the rules of the webhook configurations", rel)
		}
	}
	if want := map[string]bool{"config/webhook/service.yaml": true, "config/rbac/webhook_role.yaml": true}; !reflect.DeepEqual(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
}
