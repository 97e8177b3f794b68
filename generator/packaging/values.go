package packaging

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// ChartVersion is the version of the charts that Chart writes: set a
// release's with `helm package --version --app-version`.
const ChartVersion = "0.1.0"

func (c chart) chartFile() []byte {
	_, tag := c.op.imageValues()
	var b strings.Builder
	b.WriteString(c.opts.Header)
	fmt.Fprintf(&b, `#
# The Helm chart of the %[1]s operator, made by kopf-gen from the objects of
# its kustomization (config/default). This file is rewritten by kopf-gen.
apiVersion: v2
name: %[1]s
description: The %[1]s operator (kopf-go) with its CRDs, RBAC and Deployment.
type: application
version: %[2]s
appVersion: %[3]s
`, c.opts.Name, ChartVersion, strconv.Quote(tag))
	return []byte(b.String())
}

func (c chart) valuesFile() ([]byte, error) {
	repo, tag := c.op.imageValues()
	policy, _ := c.op.container["imagePullPolicy"].(string)
	if policy == "" {
		policy = "IfNotPresent"
	}
	replicas := lookup(map[string]any(c.op.deployment), "spec", "replicas")
	if replicas == nil {
		replicas = int64(1)
	}
	resources, err := yaml.Marshal(c.op.container["resources"])
	if err != nil {
		return nil, fmt.Errorf("chart: the operator's resources: %w", err)
	}
	var b strings.Builder
	b.WriteString(c.opts.Header)
	fmt.Fprintf(&b, `#
# The values of the %s chart, with the defaults of config/default. This file
# is rewritten by kopf-gen: give yours with helm install -f or --set.

# The operator's image.
image:
  repository: %s
  tag: %s
  pullPolicy: %s

# The Deployment's replicas. More than one only with peering or sharding
# (kopf-go's docs/peering.md, docs/sharding.md): standalone replicas would
# all handle every object.
replicas: %v

# The operator container's resources.
resources:
%s

# The namespace of the operator's namespaced objects (its ServiceAccount,
# Deployment...); empty: the release's (helm install -n NAMESPACE
# --create-namespace).
namespace: ""

# Install the CRDs with the chart (and upgrade them with it). Off: install
# them otherwise (kubectl apply -k config/crd).
crds:
  enable: true
`, c.opts.Name, strconv.Quote(repo), strconv.Quote(tag), policy, replicas,
		indent(string(resources), "  "))
	if c.op.webhooks {
		b.WriteString(`
# The admission webhooks' Service, the Role of their certificate Secret and
# its binding, and the container's webhook port. The operator serves its
# webhooks whenever its handlers have any: turn this off only where you
# provide those objects otherwise.
webhook:
  enable: true
`)
	}
	if c.op.metrics {
		b.WriteString(`
# The Prometheus metrics endpoint (--metrics-bind-address, the port named
# metrics and its Service): kopf-go's docs/metrics.md.
metrics:
  enable: true
`)
	}
	return []byte(b.String()), nil
}

func indent(s, pad string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n")
}
