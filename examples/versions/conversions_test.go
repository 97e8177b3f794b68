package main

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	"github.com/kopf-go/kopf/kopftest"
)

// The conversions lose nothing: Greetings of either version, filled at
// random, come back equal from the other version (the status as any JSON
// object).
func TestConversionsRoundTrip(t *testing.T) {
	status := func(r *runtime.RawExtension, c randfill.Continue) {
		raw, err := json.Marshal(map[string]any{"greet": map[string]any{"message": c.String(0)}})
		if err != nil {
			t.Fatal(err)
		}
		r.Raw = raw
	}
	kopftest.RoundTrip(t, GreetingV1alpha1ToV1, GreetingV1ToV1alpha1, kopftest.WithFillFuncs(status))
}
