package progress

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/blake2b"

	"github.com/kopf-go/kopf/runtime/body"
)

// DefaultPrefix is the annotation prefix of Kopf's default storages.
const DefaultPrefix = "kopf.zalando.org"

// MarkerName is the name of the annotation that marks a non-default prefix
// as managed by a Kopf-based operator: "<prefix>/kopf-managed": "yes".
const MarkerName = "kopf-managed"

// DRSSuffix is appended to every annotation key of a ReplicaSet owned by a
// Deployment (see Suffix).
const DRSSuffix = "-ofDRS"

// maxNameLength is the Kubernetes limit on the name part of an annotation
// key (V2) or, historically, on the whole key (V1).
const maxNameLength = 63

// SafeID turns a handler id into a string usable in an annotation name:
// "/" becomes ".", and "<" and ">" become "_" (so "f.<locals>.g" becomes
// "f._locals_.g" and "create_fn/item1" becomes "create_fn.item1"). Nothing
// else is changed; in particular the result is not guaranteed to be a valid
// annotation name if the id contains other characters Kubernetes rejects.
func SafeID(id string) string {
	if !strings.ContainsAny(id, "/<>") {
		return id
	}
	return safeIDReplacer.Replace(id)
}

// The replacers are immutable and safe for concurrent use; building one
// costs more than using it, so they are built once.
var (
	safeIDReplacer = strings.NewReplacer("/", ".", "<", "_", ">", "_")
	base64Replacer = strings.NewReplacer("+", "-", "/", ".")
)

// KeyV2 returns the V2 annotation key for a handler id: "prefix/" followed
// by the SafeID of the id. If the id is longer than 63 characters (Unicode
// code points, as Python counts them), the name is cut and suffixed with a
// hash of the original id so that it is exactly 63 characters long or
// shorter (see hashSuffix). An empty prefix gives an unprefixed key.
//
// For example, with the default prefix, "b"*70 becomes
// "kopf.zalando.org/" + "b"*56 + "-HIAfAA".
func KeyV2(prefix, id string) string {
	pfx := prefixWithSlash(prefix)
	suffix := ""
	if runeLen(id) > maxNameLength {
		suffix = hashSuffix(id)
	}
	limit := max(0, maxNameLength-runeLen(suffix))
	return pfx + pyHead(SafeID(id), limit) + suffix
}

// KeyV1 returns the V1 annotation key for a handler id, which Kopf still
// writes for rollbacks: the whole key, prefix included, is limited to 63
// characters. If "prefix/" + SafeID(id) fits, that is the key; otherwise
// the safe id is cut and suffixed with a hash of the safe id (not of the
// original id, unlike V2).
//
// For example, with the default prefix (46 characters left for the name),
// "a"*50 becomes "kopf.zalando.org/" + "a"*39 + "-koaVtw". With prefixes of
// more than 63 characters, the cut follows Python's slicing of negative
// lengths, as Kopf does; such keys are unusable anyway.
func KeyV1(prefix, id string) string {
	pfx := prefixWithSlash(prefix)
	safe := SafeID(id)
	suffix := ""
	if runeLen(safe) > maxNameLength-runeLen(pfx) {
		suffix = hashSuffix(safe)
	}
	return pfx + pyHead(safe, maxNameLength-runeLen(pfx)-runeLen(suffix)) + suffix
}

// Keys returns the annotation keys under which the value for id is kept
// for the object b (b may be nil): the id is first suffixed with Suffix(b),
// then the V2 key is formed, followed by the V1 key if v1 is true and it
// differs from the V2 key. Writers write all of them; readers read them in
// this order and use the first one present.
func Keys(prefix, id string, v1 bool, b body.Body) []string {
	id += Suffix(b)
	v2key := KeyV2(prefix, id)
	keys := []string{v2key}
	if v1 {
		if v1key := KeyV1(prefix, id); v1key != v2key {
			keys = append(keys, v1key)
		}
	}
	return keys
}

// Suffix returns "-ofDRS" if b is a ReplicaSet with an owner reference of
// kind Deployment, and "" otherwise (including for a nil body). Kubernetes
// copies a Deployment's annotations to its ReplicaSets; the suffix keeps the
// ReplicaSet's own state apart from its owner's.
func Suffix(b body.Body) string {
	if b.Kind() != "ReplicaSet" {
		return ""
	}
	owners, _ := b.Meta()["ownerReferences"].([]any)
	for _, owner := range owners {
		if m, ok := owner.(map[string]any); ok {
			if kind, _ := m["kind"].(string); kind == "Deployment" {
				return DRSSuffix
			}
		}
	}
	return ""
}

// hashSuffix returns "-" followed by the base64 (with "-" and "." instead of
// "+" and "/") of the 4-byte BLAKE2b digest of s, with any trailing "=",
// "-" and "." removed, as Kopf's make_suffix does.
func hashSuffix(s string) string {
	h, err := blake2b.New(4, nil)
	if err != nil {
		panic(err) // impossible: 4 is a valid size and there is no key
	}
	h.Write([]byte(s))
	enc := base64.StdEncoding.EncodeToString(h.Sum(nil))
	enc = base64Replacer.Replace(enc)
	return strings.TrimRight("-"+enc, "=-.")
}

func prefixWithSlash(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + "/"
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// pyHead returns s[:n] with Python's semantics on code points: a negative n
// counts from the end, and out-of-range bounds are clamped.
func pyHead(s string, n int) string {
	if n >= len(s) {
		return s // n code points are at least n bytes: nothing to cut
	}
	r := []rune(s)
	if n < 0 {
		n += len(r)
	}
	n = max(0, min(n, len(r)))
	return string(r[:n])
}
