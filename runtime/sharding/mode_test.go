package sharding

import (
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
