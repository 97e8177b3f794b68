package admission

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/resources"
)

// testStamp labels every object "kopf.dev/bucket" with "<namespace>.<name>",
// in the namespace "default" only.
func testStamp() *Stamp {
	return &Stamp{
		Label:  func(namespace, name string) (string, string) { return "kopf.dev/bucket", namespace + "." + name },
		Serves: func(namespace string) bool { return namespace == "default" },
	}
}

// The stamp's answers: always allowed; a patch only where the object
// needs the label and has a name.
func TestStampHandler(t *testing.T) {
	withLabels := func(labels string) string {
		return `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"kopf-example-1","namespace":"default"` + labels + `}}`
	}
	tests := []struct {
		name, review, patch string
	}{
		{"no labels: the map added", review("CREATE", "", withLabels(""), ""),
			`[{"op":"add","path":"/metadata/labels","value":{"kopf.dev/bucket":"default.kopf-example-1"}}]`},
		{"other labels: the key added, escaped", review("CREATE", "", withLabels(`,"labels":{"app":"x"}`), ""),
			`[{"op":"add","path":"/metadata/labels/kopf.dev~1bucket","value":"default.kopf-example-1"}]`},
		{"a wrong value: replaced", review("CREATE", "", withLabels(`,"labels":{"kopf.dev/bucket":"7"}`), ""),
			`[{"op":"replace","path":"/metadata/labels/kopf.dev~1bucket","value":"default.kopf-example-1"}]`},
		{"the right value: no patch", review("CREATE", "", withLabels(`,"labels":{"kopf.dev/bucket":"default.kopf-example-1"}`), ""), ``},
		{"generateName: no name, no patch", strings.Replace(review("CREATE", "", `{"metadata":{"generateName":"x-","namespace":"default"}}`, ""), `"name":"kopf-example-1",`, `"name":"",`, 1), ``},
		{"a namespace not served: no patch", strings.ReplaceAll(review("CREATE", "", withLabels(""), ""), `"default"`, `"other"`), ``},
		{"an update: no patch", review("UPDATE", "", withLabels(""), withLabels("")), ``},
	}
	logs := &testutil.Buffer{}
	h := &stampHandler{stamp: testStamp(), logger: logging.New(logs, logging.Plain, slog.LevelDebug), max: DefaultMaxRequestBytes}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, out, text := post(t, h, "/"+StampID, tt.review)
			if out == nil {
				t.Fatalf("HTTP %d: %s", resp.StatusCode, text)
			}
			if !out.Response.Allowed || out.Response.UID != "u-1" || out.Response.Result != nil {
				t.Errorf("response: %+v", out.Response)
			}
			if string(out.Response.Patch) != tt.patch {
				t.Errorf("patch = %s\nwant %s", out.Response.Patch, tt.patch)
			}
			if (tt.patch != "") != (out.Response.PatchType != nil) {
				t.Errorf("patchType %v with patch %q", out.Response.PatchType, out.Response.Patch)
			}
		})
	}
	if resp, _, _ := post(t, h, "/"+StampID, `{"kind":"AdmissionReview"}`); resp.StatusCode != 400 {
		t.Errorf("a malformed review: HTTP %d, want 400", resp.StatusCode)
	}
}

// The stamp's entry of the managed configuration.
func TestStampWebhook(t *testing.T) {
	s := testStamp()
	cc := admissionregv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9443"), CABundle: []byte("ca")}
	if w := s.webhook("auto.kopf.dev", cc); w != nil {
		t.Errorf("a webhook without resources: %+v", w)
	}
	changed := 0
	s.onChange(func() { changed++ })
	examples := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Namespaced: true}
	s.Add(examples)
	s.Add(examples)
	s.Add(resources.Resource{Version: "v1", Plural: "namespaces"})
	if changed != 2 {
		t.Errorf("%d changes, want 2 (a resource added twice is one)", changed)
	}
	s.Namespaces = []string{"b", "a"}
	w := s.webhook("auto.kopf.dev", cc)
	if w.Name != StampID+".auto.kopf.dev" || *w.ClientConfig.URL != "https://127.0.0.1:9443/"+StampID || string(w.ClientConfig.CABundle) != "ca" {
		t.Errorf("name %q, clientConfig %+v", w.Name, w.ClientConfig)
	}
	if *w.FailurePolicy != admissionregv1.Ignore || *w.SideEffects != admissionregv1.SideEffectClassNone || *w.TimeoutSeconds != StampTimeout ||
		*w.ReinvocationPolicy != admissionregv1.IfNeededReinvocationPolicy || *w.MatchPolicy != admissionregv1.Equivalent || w.ObjectSelector != nil {
		t.Errorf("webhook: %+v", w)
	}
	rules, _ := json.Marshal(w.Rules)
	want := `[{"operations":["CREATE"],"apiGroups":["kopf.dev"],"apiVersions":["v1"],"resources":["kopfexamples"],"scope":"*"},` +
		`{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["namespaces"],"scope":"*"}]`
	if string(rules) != want {
		t.Errorf("rules = %s\nwant %s", rules, want)
	}
	if ns, _ := json.Marshal(w.NamespaceSelector); string(ns) != `{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"In","values":["a","b"]}]}` {
		t.Errorf("namespaceSelector = %s", ns)
	}
}
