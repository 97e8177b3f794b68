package packaging

import (
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// chart makes the chart's files of one set of objects.
type chart struct {
	opts ChartOptions
	op   operator
}

// template returns the template of one object, its path under the chart's
// directory, and false for an object the chart leaves out (the Namespace).
func (c chart) template(o object) (path string, content []byte, ok bool, err error) {
	kind, name := o.str("kind"), o.str("metadata", "name")
	if kind == "Namespace" {
		return "", nil, false, nil
	}
	o = deepCopy(o)
	t := &tpl{}
	cond := ""
	path = "templates/" + strings.ToLower(kind) + "-" + name + ".yaml"
	switch {
	case kind == "CustomResourceDefinition":
		cond, path = crdsSwitch, "templates/crd/"+name+".yaml"
	case c.op.webhooks && isWebhookObject(o, c.opts.Name):
		cond = webhookSwitch
	case c.op.metrics && (isMetricsService(o) || isMetricsRBAC(o, c.opts.Name)):
		cond = metricsSwitch
	}
	c.namespaces(t, o)
	if kind == "Deployment" && name == c.opts.Name {
		c.deployment(t, o)
	}
	body, err := t.render(o)
	if err != nil {
		return "", nil, false, fmt.Errorf("chart: %s %s: %w", kind, name, err)
	}
	var b strings.Builder
	b.WriteString(c.opts.Header)
	if cond != "" {
		fmt.Fprintf(&b, "{{- if %s }}\n%s{{- end }}\n", cond, body)
	} else {
		b.WriteString(body)
	}
	return path, []byte(b.String()), true, nil
}

// namespaces puts the values' namespace where the object names the
// operator's: its own, and its service account subjects'.
func (c chart) namespaces(t *tpl, o object) {
	if c.op.namespace == "" {
		return
	}
	if md, ok := o["metadata"].(map[string]any); ok && md["namespace"] == c.op.namespace {
		md["namespace"] = t.inline(namespaceExpr)
	}
	subjects, _ := o["subjects"].([]any)
	for _, s := range subjects {
		if m, ok := s.(map[string]any); ok && m["kind"] == "ServiceAccount" && m["namespace"] == c.op.namespace {
			m["namespace"] = t.inline(namespaceExpr)
		}
	}
}

// deployment puts the values into the operator's Deployment: replicas,
// the container's image, pull policy and resources, and the switched
// arguments and ports.
func (c chart) deployment(t *tpl, o object) {
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		return // findOperator found its container: not this object
	}
	spec["replicas"] = t.inline("{{ .Values.replicas }}")
	containers, _ := lookup(spec, "template", "spec", "containers").([]any)
	for _, ct := range containers {
		m, ok := ct.(map[string]any)
		if !ok || m["name"] != c.op.container["name"] {
			continue
		}
		m["image"] = t.inline(`"{{ .Values.image.repository }}:{{ .Values.image.tag }}"`)
		m["imagePullPolicy"] = t.inline("{{ .Values.image.pullPolicy }}")
		m["resources"] = t.block(func(col int) string {
			return fmt.Sprintf(" {{- toYaml .Values.resources | nindent %d }}", col+2)
		})
		if args, ok := m["args"].([]any); ok {
			m["args"] = t.list(args, func(a any) string { return when(isMetricsArg(a), metricsSwitch) })
		}
		if ports, ok := m["ports"].([]any); ok {
			m["ports"] = t.list(ports, func(p any) string {
				return when(isMetricsPort(p), metricsSwitch) + when(isWebhookPort(p), webhookSwitch)
			})
		}
	}
}

func when(ok bool, cond string) string {
	if ok {
		return cond
	}
	return ""
}

// tpl turns an object with placeholders into a Helm template: a
// placeholder is a string value that marshals as itself; inline ones are
// replaced by their text, block ones by what their function returns for
// the column of their key.
type tpl struct {
	inlines map[string]string
	blocks  map[string]func(col int) string
}

func (t *tpl) placeholder() string {
	return fmt.Sprintf("kopf_gen_placeholder_%d", len(t.inlines)+len(t.blocks))
}

func (t *tpl) inline(text string) string {
	p := t.placeholder()
	if t.inlines == nil {
		t.inlines = map[string]string{}
	}
	t.inlines[p] = text
	return p
}

func (t *tpl) block(f func(col int) string) string {
	p := t.placeholder()
	if t.blocks == nil {
		t.blocks = map[string]func(int) string{}
	}
	t.blocks[p] = f
	return p
}

// list is a block of the items, each one kept only while its condition
// (if it has one) holds.
func (t *tpl) list(items []any, cond func(any) string) string {
	return t.block(func(col int) string {
		pad := strings.Repeat(" ", col)
		var b strings.Builder
		for _, it := range items {
			y, _ := yaml.Marshal(it)
			lines := strings.Split(strings.TrimSuffix(escape(string(y)), "\n"), "\n")
			c := cond(it)
			if c != "" {
				fmt.Fprintf(&b, "\n%s{{- if %s }}", pad, c)
			}
			for i, l := range lines {
				lead := "  "
				if i == 0 {
					lead = "- "
				}
				fmt.Fprintf(&b, "\n%s%s%s", pad, lead, l)
			}
			if c != "" {
				fmt.Fprintf(&b, "\n%s{{- end }}", pad)
			}
		}
		return b.String()
	})
}

// keyLine matches a line whose value is a placeholder: its indentation,
// an optional list item's dash, the key.
var keyLine = regexp.MustCompile(`^(\s*(?:- )?)[^\s:]+: (kopf_gen_placeholder_\d+)$`)

// render marshals the object, escapes what Helm would take for actions,
// and replaces the placeholders.
func (t *tpl) render(o object) (string, error) {
	y, err := yaml.Marshal(o)
	if err != nil {
		return "", err
	}
	lines := strings.Split(escape(string(y)), "\n")
	for i, l := range lines {
		m := keyLine.FindStringSubmatch(l)
		if m == nil || t.blocks[m[2]] == nil {
			continue
		}
		lines[i] = strings.TrimSuffix(l, " "+m[2]) + t.blocks[m[2]](len(m[1]))
		delete(t.blocks, m[2])
	}
	out := strings.Join(lines, "\n")
	for p, text := range t.inlines {
		if !strings.Contains(out, p) {
			return "", fmt.Errorf("placeholder of %q lost", text)
		}
		out = strings.ReplaceAll(out, p, text)
	}
	if len(t.blocks) > 0 {
		return "", fmt.Errorf("%d block placeholders lost", len(t.blocks))
	}
	return out, nil
}

// escape quotes the "{{" of a rendered object (in a CRD's descriptions,
// say) so that Helm prints it as it is.
func escape(s string) string { return strings.ReplaceAll(s, "{{", `{{ "{{" }}`) }

// deepCopy copies a JSON tree, so that templating one object never
// changes the objects it was decoded from.
func deepCopy[M ~map[string]any](m M) M {
	out := make(M, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return deepCopy(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}
