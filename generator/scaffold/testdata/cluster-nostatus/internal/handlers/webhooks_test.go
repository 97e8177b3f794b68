package handlers

import (
	"context"
	"errors"
	"testing"

	"github.com/kopf-go/kopf"

	v1alpha1 "github.com/acme/widget-operator/api/v1alpha1"
)

// Admission handlers are plain functions too.
func TestValidate(t *testing.T) {
	for greeting, refused := range map[string]bool{"Hi": false, "HI": true, "": false, "42": false} {
		kw := ValidateKwargs{Object: &v1alpha1.Widget{Spec: v1alpha1.WidgetSpec{Greeting: greeting}}}
		kw.Warnings = new([]string)
		err := Validate(context.Background(), kw)
		var admissionErr *kopf.AdmissionError
		if refused != errors.As(err, &admissionErr) {
			t.Errorf("greeting %q: %v, want refused: %v", greeting, err, refused)
		}
	}
}

func TestDefault(t *testing.T) {
	kw := DefaultKwargs{Object: &v1alpha1.Widget{}}
	kw.Patch = kopf.Patch{}
	if err := Default(context.Background(), kw); err != nil {
		t.Fatal(err)
	}
	if got := kw.Patch.Spec()["greeting"]; got != "Hello" {
		t.Errorf("spec.greeting is patched to %v, want Hello", got)
	}
}
