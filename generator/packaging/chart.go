package packaging

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/api/pkg/util"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/yaml"

	"github.com/kopf-go/kopf/generator/manifests"
)

// ChartOptions say how Chart makes a chart of an operator's objects.
type ChartOptions struct {
	// Name is the operator's name: the chart's, its Deployment's (the one
	// the values configure), and that of its webhooks' Role (see
	// manifests.WebhookRoleName).
	Name string
	// Header starts every file (a YAML comment: kopf-gen's "Code
	// generated" line).
	Header string
}

// The switches of the chart's values, and the expression of the
// operator's namespace in its templates.
const (
	crdsSwitch    = ".Values.crds.enable"
	webhookSwitch = ".Values.webhook.enable"
	metricsSwitch = ".Values.metrics.enable"
	namespaceExpr = "{{ .Values.namespace | default .Release.Namespace }}"
)

// Chart returns the files of a Helm chart (Chart.yaml, values.yaml,
// templates/...) that installs the objects of m, by path relative to the
// chart's directory. The objects are those of kopf-gen init's
// config/default; Chart finds among them:
//
//   - the operator's Deployment, named ChartOptions.Name, and its
//     container (named "operator", or the only one): its image, image pull
//     policy, replicas and resources become the values image.repository,
//     image.tag, image.pullPolicy, replicas and resources, with the
//     rendered ones as defaults;
//   - its namespace: wherever an object's namespace or a binding's
//     service account subject names it, the templates have the value
//     namespace, or the release's namespace (helm install -n) when it is
//     empty; the Namespace object itself is left to helm's
//     --create-namespace;
//   - the CRDs, installed when crds.enable (as templates, so that helm
//     upgrade updates them; Helm's crds/ directory never does);
//   - the webhooks' objects (the Service manifests.WebhookServiceName, the
//     Role and RoleBinding manifests.WebhookRoleName, the container's port
//     manifests.WebhookPortName), installed when webhook.enable;
//   - the metrics endpoint (the container's --metrics-bind-address
//     argument and its port named metrics, a Service whose ports are all
//     named metrics, the ClusterRoles and ClusterRoleBindings named
//     <name>-metrics-auth and <name>-metrics-reader), when metrics.enable.
//
// Everything else is installed as rendered. The output depends only on m
// and the options.
func Chart(m resmap.ResMap, opts ChartOptions) (map[string][]byte, error) {
	objs, err := decode(m)
	if err != nil {
		return nil, err
	}
	op, err := findOperator(objs, opts.Name)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	c := chart{opts: opts, op: op}
	for _, o := range objs {
		path, content, ok, err := c.template(o)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if _, dup := files[path]; dup {
			return nil, fmt.Errorf("chart: two objects make the template %s", path)
		}
		files[path] = content
	}
	files["Chart.yaml"] = c.chartFile()
	values, err := c.valuesFile()
	if err != nil {
		return nil, err
	}
	files["values.yaml"] = values
	return files, nil
}

// object is one rendered object, as a JSON tree.
type object map[string]any

func (o object) str(path ...string) string {
	v, _ := lookup(map[string]any(o), path...).(string)
	return v
}

func lookup(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func decode(m resmap.ResMap) ([]object, error) {
	var objs []object
	for _, r := range m.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("chart: %s: %w", r.CurId(), err)
		}
		var o object
		if err := yaml.Unmarshal(b, &o); err != nil {
			return nil, fmt.Errorf("chart: %s: %w", r.CurId(), err)
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// operator is what the chart's values configure: the Deployment, its
// container, its namespace, and which of the switches apply.
type operator struct {
	deployment object
	container  map[string]any
	namespace  string
	webhooks   bool
	metrics    bool
}

func findOperator(objs []object, name string) (operator, error) {
	var op operator
	for _, o := range objs {
		if o.str("kind") == "Deployment" && o.str("metadata", "name") == name {
			op.deployment = o
		}
	}
	if op.deployment == nil {
		return op, fmt.Errorf("chart: the objects have no Deployment named %s (the operator's, as kopf-gen init writes it in config/manager)", name)
	}
	op.namespace = op.deployment.str("metadata", "namespace")
	containers, _ := lookup(map[string]any(op.deployment), "spec", "template", "spec", "containers").([]any)
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && (m["name"] == "operator" || len(containers) == 1) {
			op.container = m
		}
	}
	if op.container == nil {
		return op, fmt.Errorf("chart: the Deployment %s has no container named operator", name)
	}
	for _, o := range objs {
		op.webhooks = op.webhooks || isWebhookObject(o, name)
		op.metrics = op.metrics || isMetricsService(o)
	}
	args, _ := op.container["args"].([]any)
	for _, a := range args {
		op.metrics = op.metrics || isMetricsArg(a)
	}
	return op, nil
}

func isWebhookObject(o object, name string) bool {
	switch o.str("kind") {
	case "Service":
		return o.str("metadata", "name") == manifests.WebhookServiceName
	case "Role", "RoleBinding":
		return o.str("metadata", "name") == manifests.WebhookRoleName(name)
	}
	return false
}

// isMetricsRBAC reports whether o is one of the scaffold's metrics roles
// or bindings (config/rbac/metrics_*.yaml): the operator's right to review
// tokens and access, and the reader's role to bind to Prometheus.
func isMetricsRBAC(o object, name string) bool {
	switch o.str("kind") {
	case "ClusterRole", "ClusterRoleBinding":
		n := o.str("metadata", "name")
		return n == name+"-metrics-auth" || n == name+"-metrics-reader"
	}
	return false
}

func isMetricsService(o object) bool {
	ports, _ := lookup(map[string]any(o), "spec", "ports").([]any)
	if o.str("kind") != "Service" || len(ports) == 0 {
		return false
	}
	for _, p := range ports {
		if lookup(p, "name") != "metrics" {
			return false
		}
	}
	return true
}

func isMetricsArg(a any) bool {
	s, _ := a.(string)
	return strings.HasPrefix(s, "--metrics-bind-address")
}

func isMetricsPort(p any) bool { return lookup(p, "name") == "metrics" }

func isWebhookPort(p any) bool { return lookup(p, "name") == manifests.WebhookPortName }

// imageValues splits the container's image into the values' repository
// and tag.
func (op operator) imageValues() (repository, tag string) {
	img, _ := op.container["image"].(string)
	name, tag, _ := util.SplitImageName(img)
	if tag == "" {
		tag = "latest"
	}
	return name, tag
}
