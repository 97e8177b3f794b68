package operator

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// The bucket watches' label selectors: the resource's own, and the bucket
// label's requirement (one bucket, the set held, or none).
func TestWithLabel(t *testing.T) {
	own, err := labels.Parse("app=x")
	if err != nil {
		t.Fatal(err)
	}
	key := "kopf.dev/sharding-bucket-of-64"
	tests := []struct {
		name   string
		ws     watchSelectors
		op     selection.Operator
		values []string
		want   string
	}{
		{"a bucket", watchSelectors{}, selection.Equals, []string{"17"}, key + "=17"},
		{"the unlabelled", watchSelectors{}, selection.DoesNotExist, nil, "!" + key},
		{"with the resource's own", watchSelectors{labels: own}, selection.Equals, []string{"3"}, "app=x," + key + "=3"},
		{"the buckets held", watchSelectors{labels: own}, selection.In, []string{"3", "17", "5"}, "app=x," + key + " in (17,3,5)"},
	}
	for _, tt := range tests {
		if got := tt.ws.withLabel(key, tt.op, tt.values...); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if own.String() != "app=x" {
		t.Errorf("the resource's own selector was changed: %s", own)
	}
}
