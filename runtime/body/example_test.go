package body_test

import (
	"encoding/json"
	"fmt"

	"github.com/kopf-go/kopf/runtime/body"
)

func ExampleBody() {
	var b body.Body
	raw := `{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": {"name": "kopf-example-1", "namespace": "default",
			"labels": {"somelabel": "somevalue"}, "finalizers": ["kopf.zalando.org/KopfFinalizerMarker"]},
		"spec": {"field": "value"}}`
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		panic(err)
	}
	fmt.Println(b.Ref())
	fmt.Println(b.APIVersion(), b.Kind())
	fmt.Println(b.Meta().Labels(), b.Meta().Finalizers())
	fmt.Println(b.Spec()["field"], b.Status() == nil)
	// Output:
	// default/kopf-example-1
	// kopf.dev/v1 KopfExample
	// map[somelabel:somevalue] [kopf.zalando.org/KopfFinalizerMarker]
	// value true
}
