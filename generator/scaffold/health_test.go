package scaffold

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestDeploymentProbes: the scaffold's Deployment is a valid Deployment
// whose liveness and readiness probes ask the paths and the port that its
// command line serves (-L/--liveness and --readiness).
func TestDeploymentProbes(t *testing.T) {
	work := t.TempDir()
	o := valid(filepath.Join(work, "widget-operator"))
	o.KopfReplace = filepath.Join(work, "kopf-go")
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
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(files["config/manager/deployment.yaml"], &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("containers: %+v", d.Spec.Template.Spec.Containers)
	}
	c := d.Spec.Template.Spec.Containers[0]
	served := map[string]*url.URL{}
	for _, arg := range c.Args {
		for _, flag := range []string{"--liveness=", "--readiness="} {
			if rest, ok := strings.CutPrefix(arg, flag); ok {
				u, err := url.Parse(rest)
				if err != nil {
					t.Fatal(err)
				}
				served[strings.Trim(flag, "-=")] = u
			}
		}
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for _, tt := range []struct {
		flag  string
		probe *corev1.Probe
	}{{"liveness", c.LivenessProbe}, {"readiness", c.ReadinessProbe}} {
		u := served[tt.flag]
		if u == nil || tt.probe == nil || tt.probe.HTTPGet == nil {
			t.Errorf("--%s is %v and its probe %+v", tt.flag, u, tt.probe)
			continue
		}
		port := tt.probe.HTTPGet.Port.IntVal
		if name := tt.probe.HTTPGet.Port.StrVal; name != "" {
			port = ports[name]
		}
		if tt.probe.HTTPGet.Path != u.Path || u.Port() == "" || u.Port() != strconv.Itoa(int(port)) {
			t.Errorf("the %s probe asks %s on port %d; the operator serves %s", tt.flag, tt.probe.HTTPGet.Path, port, u)
		}
	}
}
