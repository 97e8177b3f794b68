package sharding

import (
	"strconv"
	"testing"

	"github.com/kopf-go/kopf/runtime/progress"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		want Mode
		err  bool
	}{
		{"", ModeFilter, false},
		{"filter", ModeFilter, false},
		{"label", ModeLabel, false},
		{"server", ModeServer, false},
		{"labels", "", true},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// The essence leaves out exactly the labels that LabelKey names.
func TestLabelKeyIsLeftOutOfTheEssence(t *testing.T) {
	if LabelPrefix != progress.ShardLabelPrefix {
		t.Fatalf("LabelPrefix %q, progress.ShardLabelPrefix %q: they must be equal", LabelPrefix, progress.ShardLabelPrefix)
	}
	if got := LabelKey(64); got != "kopf.dev/sharding-bucket-of-64" {
		t.Errorf("LabelKey(64) = %q", got)
	}
}

// KeyBucket is Bucket of the object's key, so that the webhook, the
// labeller and every replica's lane agree.
func TestKeyBucket(t *testing.T) {
	for _, key := range []string{ObjectKey("ns", "a"), ObjectKey("", "cluster-scoped")} {
		if KeyBucket(key, 64) != Bucket(key, 64) {
			t.Errorf("KeyBucket(%q) differs from Bucket", key)
		}
	}
	if ObjectKey("ns", "a") != "ns/a" || ObjectKey("", "a") != "a" {
		t.Errorf("ObjectKey: %q, %q", ObjectKey("ns", "a"), ObjectKey("", "a"))
	}
}

// BucketLabel is LabelKey and KeyBucket of ObjectKey.
func TestBucketLabel(t *testing.T) {
	tests := []struct{ namespace, name string }{{"ns", "a"}, {"", "cluster-scoped"}, {"default", "during-07"}}
	for _, tt := range tests {
		key, value := BucketLabel(tt.namespace, tt.name, 64)
		if want := strconv.Itoa(KeyBucket(ObjectKey(tt.namespace, tt.name), 64)); key != LabelKey(64) || value != want {
			t.Errorf("BucketLabel(%q, %q) = %q=%q, want %q=%q", tt.namespace, tt.name, key, value, LabelKey(64), want)
		}
	}
}
