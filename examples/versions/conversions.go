package main

import (
	v1 "github.com/kopf-go/kopf/examples/apis/greetings/v1"
	"github.com/kopf-go/kopf/examples/apis/greetings/v1alpha1"
)

// GreetingV1alpha1ToV1 converts a v1alpha1 Greeting to v1, the storage
// version (the hub): spec.name became spec.greetee. The metadata is
// copied by the runtime; the status is kept as it is.
//
//kopf:conversion
func GreetingV1alpha1ToV1(src *v1alpha1.Greeting, dst *v1.Greeting) error {
	dst.Spec.Greetee = src.Spec.Name
	dst.Status = src.Status
	return nil
}

// GreetingV1ToV1alpha1 converts a v1 Greeting back to v1alpha1.
//
//kopf:conversion
func GreetingV1ToV1alpha1(src *v1.Greeting, dst *v1alpha1.Greeting) error {
	dst.Spec.Name = src.Spec.Greetee
	dst.Status = src.Status
	return nil
}
