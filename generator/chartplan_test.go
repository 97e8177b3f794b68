package generator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chartConfig is a config/ as kopf-gen init writes it for
// the operator ops (the role name of the test), with admission webhooks.
var chartConfig = map[string]string{
	"config/default/kustomization.yaml": "namespace: ops-system\nresources:\n  - ../crd\n  - ../rbac\n  - ../manager\n  - ../webhook\n",
	"config/rbac/kustomization.yaml":    "resources:\n  - role.yaml\n  - webhook_role.yaml\n",
	"config/webhook/kustomization.yaml": "resources:\n  - service.yaml\n",
	"config/manager/kustomization.yaml": "resources:\n  - deployment.yaml\n",
	"config/manager/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: ops}
spec:
  replicas: 1
  selector: {matchLabels: {app.kubernetes.io/name: ops}}
  template:
    metadata: {labels: {app.kubernetes.io/name: ops}}
    spec:
      containers: [{name: operator, image: "ops:latest", ports: [{name: webhooks, containerPort: 9443}]}]
`,
}

// TestChart generates the chart of a package with webhooks: the chart is
// made from config/default with this run's manifests (the webhooks'
// Service, not yet on disk), follows a change of the Deployment, loses the
// webhooks' templates with the handlers, and is gone from the plan with
// its option; config/crd's kustomization is generated with --kustomize
// and removed without it.
func TestChart(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages")
	}
	ctx := context.Background()
	files := map[string]string{"ops/ops.go": webhookHandlers}
	for k, v := range chartConfig {
		files[k] = v
	}
	dir := testModule(t, files)
	opts := Options{Dir: dir, Manifests: "config", RoleName: "ops", Kustomize: true, Chart: "dist/chart"}
	generated := generateAndWrite(ctx, t, opts)
	for rel, want := range map[string]string{
		"config/crd/kustomization.yaml":                   "resources: []\n",
		"dist/chart/templates/service-kopf-webhooks.yaml": "{{- if .Values.webhook.enable }}\n",
		"dist/chart/templates/role-ops-webhooks.yaml":     "  namespace: {{ .Values.namespace | default .Release.Namespace }}\n",
		"dist/chart/templates/deployment-ops.yaml":        "  replicas: {{ .Values.replicas }}\n",
		"dist/chart/values.yaml":                          "  repository: \"ops\"\n",
		"dist/chart/Chart.yaml":                           "name: ops\n",
		"dist/chart/templates/clusterrole-ops.yaml":       "kind: ClusterRole\n",
	} {
		if !strings.Contains(generated[rel], want) {
			t.Errorf("%s lacks %q:\n%s", rel, want, generated[rel])
		}
	}

	// The chart follows config/: a new image in the Deployment.
	deployment := filepath.Join(dir, "config/manager/deployment.yaml")
	if err := os.WriteFile(deployment, []byte(strings.Replace(chartConfig["config/manager/deployment.yaml"], "ops:latest", "ops:v2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := plannedChanges(ctx, t, opts)
	if want := "dist/chart/values.yaml"; len(stale) != 2 || !strings.Contains(stale[want], `tag: "v2"`) {
		t.Errorf("after the Deployment's change, the changes %v, want Chart.yaml and values.yaml with tag v2", keys(stale))
	}

	// Without webhooks (and so without the webhooks' kustomization), their
	// templates go.
	for _, rel := range []string{"ops/ops.go", "config/webhook/kustomization.yaml"} {
		content := ""
		if rel == "ops/ops.go" {
			content = "package ops\n\nimport \"context\"\n\n//kopf:on.create kopf.dev/v1/kopfexamples\nfunc Create(ctx context.Context, kw CreateKwargs) error { return nil }\n"
		} else {
			content = "resources: []\n"
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "config/rbac/kustomization.yaml"), []byte("resources:\n  - role.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changes := plannedChanges(ctx, t, opts)
	for _, rel := range []string{"dist/chart/templates/service-kopf-webhooks.yaml", "dist/chart/templates/role-ops-webhooks.yaml"} {
		if content, ok := changes[rel]; !ok || content != "" {
			t.Errorf("without webhooks, %s is not removed: %v", rel, keys(changes))
		}
	}

	// Without --kustomize, config/crd's kustomization is an orphan.
	changes = plannedChanges(ctx, t, Options{Dir: dir, Manifests: "config", RoleName: "ops"})
	if content, ok := changes["config/crd/kustomization.yaml"]; !ok || content != "" {
		t.Errorf("without --kustomize, the changes are %v, want the removal of config/crd/kustomization.yaml", keys(changes))
	}

	// No config/default: an error that says what is missing.
	if err := os.RemoveAll(filepath.Join(dir, "config/default")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Generate(ctx, opts); err == nil || !strings.Contains(err.Error(), "--chart renders the kustomization") {
		t.Errorf("Generate without config/default: %v", err)
	}
}

// generateAndWrite generates and writes the files, and returns what it
// wrote by path relative to opts.Dir.
func generateAndWrite(ctx context.Context, t *testing.T, opts Options) map[string]string {
	t.Helper()
	files, _, err := Generate(ctx, opts)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if _, err := Write(files); err != nil {
		t.Fatal(err)
	}
	return byRel(opts.Dir, files, false)
}

// plannedChanges returns the files that Generate would change: their new
// content, "" for a removal.
func plannedChanges(ctx context.Context, t *testing.T, opts Options) map[string]string {
	t.Helper()
	files, _, err := Generate(ctx, opts)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return byRel(opts.Dir, files, true)
}

func byRel(dir string, files []File, changedOnly bool) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		if changedOnly && f.UpToDate() {
			continue
		}
		rel, _ := filepath.Rel(dir, f.Path)
		out[filepath.ToSlash(rel)] = string(f.Want)
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
