package sharding

import (
	"fmt"
	"strconv"
)

// Mode is how the replicas receive only their buckets' objects
// (docs/sharding.md, "Modes"). In every mode the client-side filter
// (shardstage's Lane.Admit) stays as the safety net: an object of a
// bucket not held is never admitted, whatever the API server sends.
type Mode string

// The modes.
const (
	// ModeFilter: every replica lists and watches every object and drops
	// those of other buckets on the client. The bucket is by the uid
	// (Bucket of metadata.uid). Works on any API server, costs each
	// replica the whole resource's traffic. The default.
	ModeFilter Mode = "filter"
	// ModeLabel: every object carries its bucket in a label (LabelKey),
	// and each replica watches its buckets only, one watch per bucket
	// held (a label selector "key=b"). The bucket is by the object's
	// namespace and name (KeyBucket), which are known at admission: the
	// operator's mutating webhook stamps the label at creation, and a
	// labeller (a watch of "!key" on every replica) labels the objects
	// that lack it. Works on any API server.
	ModeLabel Mode = "label"
	// ModeServer: each replica watches its buckets only, one watch per
	// bucket held with KEP-5866's shardSelector (the hash range of the
	// bucket, over metadata.uid); the API server filters. Needs an API
	// server with the ShardedListAndWatch feature; where the server does
	// not honour the selector, the resource falls back to ModeFilter.
	ModeServer Mode = "server"
)

// ParseMode parses a mode's name; "" is ModeFilter.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeFilter, nil
	case ModeFilter, ModeLabel, ModeServer:
		return m, nil
	}
	return "", fmt.Errorf("unknown sharding mode %q: filter, label or server", s)
}

// LabelPrefix begins the key of the bucket label of ModeLabel; the key
// ends with the number of buckets (LabelKey). progress.BuildEssence leaves
// the labels of this prefix out of the diff-base's essence (its
// ShardLabelPrefix, held equal by a test): labelling an object, or
// labelling it anew for another number of buckets, is never a change that
// handlers see.
const LabelPrefix = "kopf.dev/sharding-bucket-of-"

// LabelKey is the key of the bucket label for a number of buckets, e.g.
// "kopf.dev/sharding-bucket-of-64". The number is in the key, not only
// in the value, so that a change of --shards never meets a label of the
// old count read as a bucket of the new one: the replicas with the new
// count select a key that no object has yet, and their labeller fills it.
func LabelKey(buckets int) string {
	return LabelPrefix + strconv.Itoa(buckets)
}

// KeyBucket is the bucket of ModeLabel: Bucket of the object's key,
// "namespace/name" (or "name" if cluster-scoped). Unlike the uid, the key
// is known at admission, so that the webhook can stamp the label at
// creation and every replica computes the same bucket for the object.
func KeyBucket(key string, buckets int) int {
	return Bucket(key, buckets)
}

// ObjectKey is an object's key as KeyBucket takes it.
func ObjectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// BucketLabel is the bucket label of ModeLabel of the object name in
// namespace ("" if cluster-scoped) for a number of buckets: LabelKey and
// the decimal KeyBucket of its ObjectKey. The one computation of the label
// that every writer uses (the labeller, the operator's mutating webhook at
// creation), so that they never disagree.
func BucketLabel(namespace, name string, buckets int) (key, value string) {
	return LabelKey(buckets), strconv.Itoa(KeyBucket(ObjectKey(namespace, name), buckets))
}
