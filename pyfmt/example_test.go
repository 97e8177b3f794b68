package pyfmt_test

import (
	"fmt"

	"github.com/kopf-go/kopf/pyfmt"
)

// Kopf's print(f"field={spec['field']!r}, items={spec['items']}") and
// print(pprint.pformat(spec)), ported.
func Example() {
	spec := map[string]any{
		"field": "it's",
		"items": []any{"item1", 2, 2.5, nil, true},
		"labels": map[string]any{
			"app": "kopf-example", "tier": "backend", "owner": "team-a", "release": "stable",
		},
	}
	fmt.Printf("field=%s, items=%s\n", pyfmt.Repr(spec["field"]), pyfmt.Str(spec["items"]))
	fmt.Println(pyfmt.Str(spec["field"]))
	fmt.Println(pyfmt.Pformat(spec))
	fmt.Println(pyfmt.Repr(map[[2]string][]string{{"default", "pod-a"}: {"web"}}))
	fmt.Println(pyfmt.Float(2))
	// Output:
	// field="it's", items=['item1', 2, 2.5, None, True]
	// it's
	// {'field': "it's",
	//  'items': ['item1', 2, 2.5, None, True],
	//  'labels': {'app': 'kopf-example',
	//             'owner': 'team-a',
	//             'release': 'stable',
	//             'tier': 'backend'}}
	// {('default', 'pod-a'): ['web']}
	// 2.0
}
