package patches_test

import (
	"encoding/json"
	"fmt"

	"github.com/kopf-go/kopf/runtime/patches"
)

func ExamplePatch_Split() {
	p := patches.New()
	p.SetAnnotation("kopf.zalando.org/touch-dummy", nil)
	p.MergeResult("create_fn", map[string]any{"message": "hello"})

	main, status := p.Split()
	m, _ := json.Marshal(main)
	s, _ := json.Marshal(status)
	fmt.Println(string(m))
	fmt.Println(string(s))
	// Output:
	// {"metadata":{"annotations":{"kopf.zalando.org/touch-dummy":null}}}
	// {"status":{"create_fn":{"message":"hello"}}}
}
