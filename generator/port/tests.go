package port

import (
	"fmt"
	"strings"
)

// unitTestSource is internal/handlers/handlers_test.go: the ported
// handlers register (every marker and callback is accepted at run time).
const unitTestSource = `package handlers

import (
	"testing"

	"github.com/kopf-go/kopf"
)

// The ported handlers register. Test each handler as a plain function
// with kwargs made by hand (see docs/testing.md).
func TestRegister(t *testing.T) {
	if err := Register(kopf.NewRegistry()); err != nil {
		t.Fatal(err)
	}
	if Memo() == nil {
		t.Error("Memo() is nil")
	}
}
`

// e2eSource is test/e2e/e2e_test.go: the operator runs against a real
// API server (envtest), the sample objects are created and deleted, and
// no handler fails.
func e2eSource(module string, crds []*crd) string {
	var gvrs, kinds []string
	for _, c := range crds {
		gvrs = append(gvrs, fmt.Sprintf("{Group: %q, Version: %q, Resource: %q}", c.Group, c.Version, c.Plural))
		kinds = append(kinds, c.Plural)
	}
	return `// Package e2e tests the ported operator end to end: its handlers run in an
// operator in the test's process (kopftest), against a real etcd and
// kube-apiserver (envtest) with the CRDs of config/crd/ installed, if any.
// make test-e2e builds the control plane with kopf-gen envtest.
package e2e

import (
	"errors"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"

	"` + module + `/internal/handlers"
)

const timeout = 30 * time.Second

// samples are the resources of config/samples/ (one sample object each).
var samples = map[string]schema.GroupVersionResource{` + joinSamples(kinds, gvrs) + `}

// TestOperator creates and deletes the sample objects while the operator
// runs. TODO(port): check what the handlers do (kopftest.Match, status).
func TestOperator(t *testing.T) {
	if _, err := envtest.Assets(); errors.Is(err, envtest.ErrNoAssets) {
		if os.Getenv("KOPF_E2E") != "" {
			t.Fatalf("no control plane, though KOPF_E2E is set: %v", err)
		}
		t.Skipf("no control plane (make test-e2e builds one): %v", err)
	}
	var opts []envtest.Option
	if _, err := os.Stat("../../config/crd"); err == nil { // none for built-in resources only
		opts = append(opts, envtest.WithCRDs("../../config/crd"))
	}
	env := envtest.Start(t, opts...)
	op := kopftest.Start(t, env.Config, handlers.Register, kopf.WithMemo(handlers.Memo()))
	for plural, gvr := range samples {
		data, err := os.ReadFile("../../config/samples/" + plural + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			t.Fatal(err)
		}
		objects := kopftest.NewObjects(t, env.Config, gvr, "default")
		name := objects.Create(obj).GetName()
		objects.Delete(name, timeout)
	}
	for _, o := range op.Outcomes(kopftest.Match{Result: kopftest.Failed}) {
		t.Errorf("a handler failed: %s", o)
	}
	if err := op.Stop(); err != nil {
		t.Errorf("the operator exited with %v", err)
	}
}
`
}

func joinSamples(kinds, gvrs []string) string {
	var b strings.Builder
	for i := range kinds {
		fmt.Fprintf(&b, "\n\t%q: %s,", kinds[i], gvrs[i])
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
