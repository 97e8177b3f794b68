package scaffold

import (
	"bytes"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/kopf-go/kopf/generator/manifests"
)

// renderWebhooks renders the scaffold of widget-operator with or without
// webhooks.
func renderWebhooks(t *testing.T, webhooks bool) map[string][]byte {
	t.Helper()
	work := t.TempDir()
	o := valid(filepath.Join(work, "widget-operator"))
	o.KopfReplace = filepath.Join(work, "kopf-go")
	o.Namespace = "widgets"
	o.Webhooks = webhooks
	if err := os.Rename(fakeKopf(t), o.KopfReplace); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	files, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRenderWebhooks: with --webhooks, the scaffold has admission
// handlers and what serves them, consistent with what kopf-gen writes for
// them: the Deployment's pods are those that the generated Service selects
// and expose the port it targets, and the RoleBinding binds the generated
// Role in the operator's namespace. Without, it has none of it.
func TestRenderWebhooks(t *testing.T) {
	files := renderWebhooks(t, true)
	for name, content := range files {
		if strings.HasSuffix(name, ".go") {
			if formatted, err := format.Source(content); err != nil || !bytes.Equal(formatted, content) {
				t.Errorf("%s is not gofmt-clean: %v\n%s", name, err, content)
			}
		}
		if bytes.Contains(content, []byte("<no value>")) {
			t.Errorf("%s has an empty template value", name)
		}
	}

	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(files["config/manager/deployment.yaml"], &d); err != nil {
		t.Fatal(err)
	}
	svcYAML, err := manifests.WebhookService(manifests.WebhookOptions{Name: "widget-operator", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var svc corev1.Service
	if err := yaml.UnmarshalStrict(svcYAML, &svc); err != nil {
		t.Fatal(err)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the Service selects %v; the pods are labelled %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	target := svc.Spec.Ports[0].TargetPort
	found := false
	for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
		if p.ContainerPort == target.IntVal && p.Name == manifests.WebhookPortName {
			found = true
		}
	}
	if !found {
		t.Errorf("the pods expose %+v; the Service targets port %s", d.Spec.Template.Spec.Containers[0].Ports, target.String())
	}

	var rb rbacv1.RoleBinding
	if err := yaml.UnmarshalStrict(files["config/rbac/webhook_role_binding.yaml"], &rb); err != nil {
		t.Fatal(err)
	}
	if rb.Namespace != "widgets" || rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != manifests.WebhookRoleName("widget-operator") ||
		len(rb.Subjects) != 1 || rb.Subjects[0].Name != "widget-operator" || rb.Subjects[0].Namespace != "widgets" {
		t.Errorf("the RoleBinding: %+v", rb)
	}

	for name, wants := range map[string][]string{
		"internal/handlers/webhooks.go": {"//kopf:on.validate example.com/v1alpha1/widgets operations=[CREATE, UPDATE]\n",
			"//kopf:on.mutate example.com/v1alpha1/widgets operations=[CREATE]\n", "kopf.NewAdmissionError("},
		"internal/handlers/webhooks_test.go": {"func TestValidate(t *testing.T) {", "func TestDefault(t *testing.T) {"},
		"main.go": {"os.Exit(kopf.Main(handlers.Register, webhooks()...))", `kopf.WithManagedWebhooks("widget-operator.example.com")`,
			`kopf.WithWebhookServer(kopf.WebhookAutoServer(kopf.WebhookServer{}))`},
		"test/e2e/e2e_test.go": {`kopf.WithWebhookServer(kopf.WebhookServer{Addr: "127.0.0.1", Port: freePort(t)})`,
			`kopf.WithManagedWebhooks("widget-operator.example.com")`, `"spec.greeting must not shout"`},
		"config/default/kustomization.yaml": {"namespace: widgets\nresources:\n  - namespace.yaml\n  - ../crd\n  - ../rbac\n  - ../manager\n  - ../webhook\n"},
		"config/rbac/kustomization.yaml":    {"  - webhook_role.yaml\n  - webhook_role_binding.yaml\n"},
		"config/default/namespace.yaml":     {"kind: Namespace\nmetadata:\n  name: widgets\n"},
		"README.md":                         {"## Admission webhooks\n", "`config/webhook/service.yaml`"},
	} {
		for _, w := range wants {
			if !strings.Contains(string(files[name]), w) {
				t.Errorf("%s lacks %q:\n%s", name, w, files[name])
			}
		}
	}

	plain := renderWebhooks(t, false)
	for name := range webhookOnly {
		if _, ok := plain[strings.TrimSuffix(name, ".tmpl")]; ok {
			t.Errorf("%s is rendered without webhooks", name)
		}
	}
	for name, content := range plain {
		if strings.Contains(strings.ToLower(string(content)), "webhook") {
			t.Errorf("%s mentions webhooks without them", name)
		}
	}
}
