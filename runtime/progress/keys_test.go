package progress

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
)

func TestSafeID(t *testing.T) {
	tests := map[string]string{
		"create_fn":           "create_fn",
		"field_fn/spec.field": "field_fn.spec.field",
		"create_fn/item1":     "create_fn.item1",
		"f.<locals>.g":        "f._locals_.g",
		"a/b/<c>":             "a.b._c_",
		"":                    "",
	}
	for id, want := range tests {
		if got := SafeID(id); got != want {
			t.Errorf("SafeID(%q) = %q, want %q", id, got, want)
		}
	}
}

// The literal examples of kopf-wire-format.md.
func TestKeysWireFormatExamples(t *testing.T) {
	tests := []struct {
		id     string
		v2, v1 string
	}{
		{"create_fn", "kopf.zalando.org/create_fn", "kopf.zalando.org/create_fn"},
		{"field_fn/spec.field", "kopf.zalando.org/field_fn.spec.field", "kopf.zalando.org/field_fn.spec.field"},
		{"create_fn/item1", "kopf.zalando.org/create_fn.item1", "kopf.zalando.org/create_fn.item1"},
		{strings.Repeat("a", 50),
			"kopf.zalando.org/" + strings.Repeat("a", 50),
			"kopf.zalando.org/" + strings.Repeat("a", 39) + "-koaVtw"},
		{strings.Repeat("b", 70),
			"kopf.zalando.org/" + strings.Repeat("b", 56) + "-HIAfAA",
			"kopf.zalando.org/" + strings.Repeat("b", 39) + "-HIAfAA"},
	}
	for _, tt := range tests {
		if got := KeyV2(DefaultPrefix, tt.id); got != tt.v2 {
			t.Errorf("KeyV2(%q) = %q, want %q", tt.id, got, tt.v2)
		}
		if got := KeyV1(DefaultPrefix, tt.id); got != tt.v1 {
			t.Errorf("KeyV1(%q) = %q, want %q", tt.id, got, tt.v1)
		}
	}
}

// testdata/keys.json was computed with Kopf 1.44's StorageKeyFormingConvention
// (make_v2_key, make_v1_key, make_suffix) for various prefixes and ids,
// including non-ASCII ids, ids at the length limits, and an over-long prefix.
func TestKeysGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct{ Prefix, ID, V2, V1, Suffix string }
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no golden rows")
	}
	for _, row := range rows {
		if got := KeyV2(row.Prefix, row.ID); got != row.V2 {
			t.Errorf("KeyV2(%q, %q) = %q, want %q", row.Prefix, row.ID, got, row.V2)
		}
		if got := KeyV1(row.Prefix, row.ID); got != row.V1 {
			t.Errorf("KeyV1(%q, %q) = %q, want %q", row.Prefix, row.ID, got, row.V1)
		}
		if got := hashSuffix(row.ID); got != row.Suffix {
			t.Errorf("hashSuffix(%q) = %q, want %q", row.ID, got, row.Suffix)
		}
	}
}

func drsBody() body.Body {
	return body.Body{
		"apiVersion": "apps/v1",
		"kind":       "ReplicaSet",
		"metadata": map[string]any{
			"name": "rs",
			"ownerReferences": []any{
				map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
			},
		},
	}
}

func TestSuffix(t *testing.T) {
	tests := []struct {
		name string
		b    body.Body
		want string
	}{
		{"nil body", nil, ""},
		{"plain object", body.Body{"kind": "KopfExample"}, ""},
		{"replicaset owned by deployment", drsBody(), "-ofDRS"},
		{"replicaset with other owners first", body.Body{"kind": "ReplicaSet", "metadata": map[string]any{
			"ownerReferences": []any{map[string]any{"kind": "Other"}, "junk", map[string]any{"kind": "Deployment"}},
		}}, "-ofDRS"},
		{"replicaset without owners", body.Body{"kind": "ReplicaSet", "metadata": map[string]any{}}, ""},
		{"replicaset owned by something else", body.Body{"kind": "ReplicaSet", "metadata": map[string]any{
			"ownerReferences": []any{map[string]any{"kind": "Rollout"}},
		}}, ""},
		{"deployment-owned pod", body.Body{"kind": "Pod", "metadata": map[string]any{
			"ownerReferences": []any{map[string]any{"kind": "Deployment"}},
		}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Suffix(tt.b); got != tt.want {
				t.Errorf("Suffix() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	a50 := strings.Repeat("a", 50)
	tests := []struct {
		name   string
		prefix string
		id     string
		v1     bool
		b      body.Body
		want   []string
	}{
		{"same keys deduplicated", DefaultPrefix, "create_fn", true, nil, []string{"kopf.zalando.org/create_fn"}},
		{"both keys", DefaultPrefix, a50, true, nil, []string{
			"kopf.zalando.org/" + a50, "kopf.zalando.org/" + strings.Repeat("a", 39) + "-koaVtw"}},
		{"v1 disabled", DefaultPrefix, a50, false, nil, []string{"kopf.zalando.org/" + a50}},
		{"drs suffix", DefaultPrefix, "create_fn", true, drsBody(), []string{"kopf.zalando.org/create_fn-ofDRS"}},
		{"drs suffix on the diffbase key", DefaultPrefix, "last-handled-configuration", true, drsBody(),
			[]string{"kopf.zalando.org/last-handled-configuration-ofDRS"}},
		{"drs suffix before hashing", DefaultPrefix, a50, true, drsBody(), []string{
			"kopf.zalando.org/" + a50 + "-ofDRS", KeyV1(DefaultPrefix, a50+"-ofDRS")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Keys(tt.prefix, tt.id, tt.v1, tt.b); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Keys() = %q, want %q", got, tt.want)
			}
		})
	}
}

// BenchmarkKeys: the reactor computes the keys of every handler several
// times per cycle (read, write, purge).
func BenchmarkKeys(b *testing.B) {
	for b.Loop() {
		Keys(DefaultPrefix, "create_fn", true, nil)
		Keys(DefaultPrefix, "create_fn/item1", true, nil)
	}
}
