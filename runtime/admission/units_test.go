package admission

import (
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/utils/ptr"

	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

func TestJSONPatch(t *testing.T) {
	obj := `{"metadata":{"name":"x","labels":{"a":"1"}},"spec":{"list":[1,2],"n":1,"nested":{"k":"v"}}}`
	tests := []struct {
		name  string
		patch patches.Patch
		want  string
	}{
		{"empty", patches.Patch{}, `null`},
		{"no-op: same value, absent key removed", patches.Patch{"spec": map[string]any{"n": 1, "absent": nil}}, `null`},
		{"add", patches.Patch{"spec": map[string]any{"new": "v"}}, `[{"op":"add","path":"/spec/new","value":"v"}]`},
		{"replace a list whole", patches.Patch{"spec": map[string]any{"list": []int{3}}}, `[{"op":"replace","path":"/spec/list","value":[3]}]`},
		{"remove", patches.Patch{"metadata": map[string]any{"labels": map[string]any{"a": nil}}}, `[{"op":"remove","path":"/metadata/labels/a"}]`},
		{"a map over a scalar", patches.Patch{"spec": map[string]any{"n": map[string]any{"x": 1}}}, `[{"op":"replace","path":"/spec/n","value":{"x":1}}]`},
		{"a new subtree", patches.Patch{"status": map[string]any{"a": map[string]any{"b": true}}}, `[{"op":"add","path":"/status","value":{"a":{"b":true}}}]`},
		{"escaped keys", patches.Patch{"metadata": map[string]any{"annotations": map[string]any{"kopf.dev/x~y": "z"}}}, `[{"op":"add","path":"/metadata/annotations","value":{"kopf.dev/x~y":"z"}}]`},
		{"escaped pointer", patches.Patch{"metadata": map[string]any{"labels": map[string]any{"kopf.dev/x~y": "z"}}}, `[{"op":"add","path":"/metadata/labels/kopf.dev~1x~0y","value":"z"}]`},
		{"a null value set", patches.Patch{"spec": map[string]any{"nested": map[string]any{"k": nil}}}, `[{"op":"remove","path":"/spec/nested/k"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := utiljson.Unmarshal([]byte(obj), &m); err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(m)
			ops, err := jsonPatch(m, tt.patch)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(ops)
			if len(ops) == 0 {
				got = []byte("null")
			}
			if string(got) != tt.want {
				t.Errorf("ops = %s\nwant %s", got, tt.want)
			}
			if after, _ := json.Marshal(m); string(after) != string(before) {
				t.Errorf("the object was modified: %s", after)
			}
		})
	}
	if _, err := jsonPatch(map[string]any{}, patches.Patch{"x": func() {}}); err == nil {
		t.Error("an unencodable patch: no error")
	}
}

func TestWebhookNamesAndPaths(t *testing.T) {
	for id, want := range map[string]string{
		"check":          "check.auto.kopf.dev",
		"create_fn/sub":  "create-fn.sub.auto.kopf.dev",
		"weird id+chars": "weird20id2bchars.auto.kopf.dev",
	} {
		if got := webhookName(id, "auto.kopf.dev"); got != want {
			t.Errorf("webhookName(%q) = %q, want %q", id, got, want)
		}
	}
	cc := withHandlerID(admissionregv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9443/")}, "a/b")
	if *cc.URL != "https://127.0.0.1:9443/a%2Fb" {
		t.Errorf("url = %s", *cc.URL)
	}
	cc = withHandlerID(admissionregv1.WebhookClientConfig{Service: &admissionregv1.ServiceReference{Name: "s", Namespace: "n", Path: ptr.To("/root")}}, "check")
	if *cc.Service.Path != "/root/check" {
		t.Errorf("service path = %s", *cc.Service.Path)
	}
	if got := buildURL("https", "::1", 9443, "/p"); got != "https://[::1]:9443/p" {
		t.Errorf("buildURL = %s", got)
	}
	if got := buildURL("https", "example.com", 443, ""); got != "https://example.com" {
		t.Errorf("buildURL = %s", got)
	}
	for addr, want := range map[string]string{"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1", "10.0.0.1": "10.0.0.1", "host": "host"} {
		if got := accessible(addr); got != want {
			t.Errorf("accessible(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestBuildWebhooks(t *testing.T) {
	found := []resources.Resource{
		{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample"},
		{Group: "", Version: "v1", Plural: "pods", Kind: "Pod"},
	}
	hs := []*registry.WebhookHandler{
		{ID: "check", Kind: registry.WebhookValidating, Selector: examples, Operations: []string{"CREATE"},
			Filter: filters.Filter{Labels: map[string]filters.Matcher{"a": filters.IsEqual("1"), "b": filters.IsPresent(), "c": filters.IsAbsent(),
				"d": filters.Func(func(any, bool, *kwargs.Base) bool { return true })}}},
		{ID: "status", Kind: registry.WebhookValidating, Selector: examples, Subresource: "status", IgnoreFailures: true, SideEffects: true, Persistent: true},
	}
	cc := admissionregv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9443"), CABundle: []byte("ca")}
	ws := buildWebhooks(hs, found, "auto.kopf.dev", cc, false)
	if len(ws) != 2 {
		t.Fatalf("%d webhooks", len(ws))
	}
	w := ws[0]
	if w.Name != "check.auto.kopf.dev" || *w.ClientConfig.URL != "https://127.0.0.1:9443/check" || string(w.ClientConfig.CABundle) != "ca" ||
		*w.FailurePolicy != admissionregv1.Fail || *w.SideEffects != admissionregv1.SideEffectClassNone || *w.TimeoutSeconds != 30 {
		t.Errorf("webhook: %+v", w)
	}
	if len(w.Rules) != 1 || w.Rules[0].Resources[0] != "kopfexamples" || w.Rules[0].APIGroups[0] != "kopf.dev" || w.Rules[0].Operations[0] != "CREATE" {
		t.Errorf("rules: %+v", w.Rules)
	}
	if sel := w.ObjectSelector; sel == nil || len(sel.MatchExpressions) != 3 || sel.MatchExpressions[0].Operator != "In" || sel.MatchExpressions[1].Operator != "Exists" || sel.MatchExpressions[2].Operator != "DoesNotExist" {
		t.Errorf("objectSelector: %+v", w.ObjectSelector)
	}
	w = ws[1]
	if w.Rules[0].Resources[0] != "kopfexamples/status" || w.Rules[0].Operations[0] != "*" || *w.FailurePolicy != admissionregv1.Ignore || *w.SideEffects != admissionregv1.SideEffectClassNoneOnDryRun {
		t.Errorf("status webhook: %+v", w)
	}
	if ws := buildWebhooks(hs, found, "auto.kopf.dev", cc, true); len(ws) != 1 || ws[0].Name != "status.auto.kopf.dev" {
		t.Errorf("persistent only: %+v", ws)
	}
}

func TestSecretCertsGenerate(t *testing.T) {
	now := time.Now()
	sc := &secretCerts{hosts: []string{"127.0.0.1", "svc.ns.svc"}, validity: 90 * 24 * time.Hour, logger: slog.New(slog.DiscardHandler), now: func() time.Time { return now }}
	data, err := sc.generate(nil)
	if err != nil {
		t.Fatal(err)
	}
	kp, ok := sc.usable(data)
	if !ok {
		t.Fatal("a fresh certificate is not usable")
	}
	if got := kp.leaf.IPAddresses; len(got) != 1 || got[0].String() != "127.0.0.1" || kp.leaf.DNSNames[0] != "svc.ns.svc" {
		t.Errorf("SANs: %v %v", kp.leaf.IPAddresses, kp.leaf.DNSNames)
	}
	// Another host: not usable, regenerated with the same CA.
	other := *sc
	other.hosts = []string{"elsewhere"}
	if _, ok := other.usable(data); ok {
		t.Error("a certificate for other hosts is usable")
	}
	// Two thirds of the validity later: due, renewed with the same CA.
	now = now.Add(61 * 24 * time.Hour)
	if _, ok := sc.usable(data); ok {
		t.Error("a certificate due for renewal is usable")
	}
	renewed, err := sc.generate(data)
	if err != nil {
		t.Fatal(err)
	}
	if string(renewed[secretCACert]) != string(data[secretCACert]) || string(renewed[secretTLSCert]) == string(data[secretTLSCert]) {
		t.Error("the renewal did not keep the CA or did not renew the certificate")
	}
	if _, ok := sc.usable(renewed); !ok {
		t.Error("the renewed certificate is not usable")
	}
	// The store swaps it and tells of a new CA bundle only.
	store := &certStore{}
	bundles := 0
	store.onCABundle(func([]byte) { bundles++ })
	first, _ := parsePair(data[secretTLSCert], data[secretTLSKey], data[secretCACert])
	second, _ := parsePair(renewed[secretTLSCert], renewed[secretTLSKey], renewed[secretCACert])
	if !store.set(first) || !store.set(second) || store.set(second) {
		t.Error("set reports changes wrongly")
	}
	if bundles != 1 {
		t.Errorf("%d CA bundle notifications, want 1", bundles)
	}
	got, err := store.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil || got != second.cert {
		t.Errorf("GetCertificate: %v", err)
	}
}

func TestFileCertsReload(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	sc := &secretCerts{hosts: []string{"127.0.0.1"}, validity: time.Hour, now: func() time.Time { return now }}
	write := func() {
		t.Helper()
		data, err := sc.generate(nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, key := range map[string]string{"tls.crt": secretTLSCert, "tls.key": secretTLSKey, "ca.crt": secretCACert} {
			if err := os.WriteFile(filepath.Join(dir, name), data[key], 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	write()
	fc := &fileCerts{certFile: filepath.Join(dir, "tls.crt"), keyFile: filepath.Join(dir, "tls.key"), caFile: filepath.Join(dir, "ca.crt")}
	kp, changed, err := fc.load()
	if err != nil || !changed || kp == nil {
		t.Fatalf("first load: %v %v", changed, err)
	}
	if _, changed, err := fc.load(); err != nil || changed {
		t.Fatalf("unchanged files reloaded: %v %v", changed, err)
	}
	write()
	kp2, changed, err := fc.load()
	if err != nil || !changed || string(kp2.cert.Certificate[0]) == string(kp.cert.Certificate[0]) {
		t.Fatalf("changed files not reloaded: %v %v", changed, err)
	}
	if err := os.WriteFile(fc.keyFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := fc.load(); err == nil {
		t.Error("a broken key: no error")
	}
}
