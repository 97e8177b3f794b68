package kopftest

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type gadgetOld struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size  int32             `json:"size,omitempty"`
		Old   string            `json:"oldName,omitempty"`
		Tags  []string          `json:"tags,omitempty"`
		Extra map[string]string `json:"extra,omitempty"`
	} `json:"spec"`
	Status map[string]any `json:"status,omitempty"`
}

type gadgetNew struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size  int32             `json:"size,omitempty"`
		New   string            `json:"newName,omitempty"`
		Tags  []string          `json:"tags,omitempty"`
		Extra map[string]string `json:"extra,omitempty"`
	} `json:"spec"`
	Status map[string]any `json:"status,omitempty"`
}

func gadgetToNew(src *gadgetOld, dst *gadgetNew) error {
	dst.Spec.Size, dst.Spec.New, dst.Spec.Tags, dst.Spec.Extra = src.Spec.Size, src.Spec.Old, src.Spec.Tags, src.Spec.Extra
	dst.Status = src.Status
	return nil
}

func gadgetToOld(src *gadgetNew, dst *gadgetOld) error {
	dst.Spec.Size, dst.Spec.Old, dst.Spec.Tags, dst.Spec.Extra = src.Spec.Size, src.Spec.New, src.Spec.Tags, src.Spec.Extra
	dst.Status = src.Status
	return nil
}

func TestRoundTrip(t *testing.T) {
	RoundTrip(t, gadgetToNew, gadgetToOld)
	RoundTrip(t, gadgetToNew, gadgetToOld, WithSeed(42), WithIterations(20))
}

func TestRoundTripFailures(t *testing.T) {
	lossy := func(src *gadgetNew, dst *gadgetOld) error {
		dst.Spec.Size, dst.Spec.Old = src.Spec.Size, src.Spec.New // tags, extra and status lost
		return nil
	}
	failing := func(*gadgetNew, *gadgetOld) error { return errors.New("cannot") }
	panicking := func(*gadgetNew, *gadgetOld) error { panic("boom") }
	for _, tt := range []struct {
		name    string
		fromHub func(*gadgetNew, *gadgetOld) error
		want    []string
	}{
		{"lossy", lossy, []string{"*kopftest.gadgetOld → *kopftest.gadgetNew → *kopftest.gadgetOld (seed 1, object #", "the object comes back different: ", "'remove'"}},
		{"an error", failing, []string{"(seed 1, object #0): cannot", "the object: map["}},
		{"a panic", panicking, []string{"(seed 1, object #0): the conversion panicked: boom"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			r.call(func() { RoundTrip(r, gadgetToNew, tt.fromHub) })
			if len(r.errors) != 1 {
				t.Fatalf("errors: %q; want one", r.errors)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.errors[0], w) {
					t.Errorf("the failure does not say %q:\n%s", w, r.errors[0])
				}
			}
		})
	}
}
