// Package progress persists the operator's state inside the objects it
// handles, in exactly the formats Kopf 1.44 uses, so that a Go operator and
// a Kopf operator can take over each other's objects mid-flight (see
// kopf-wire-format.md).
//
// Two kinds of state are kept:
//
//   - Progress records (ProgressStorage): one Record per handler id, saying
//     when the handler started, whether it succeeded or failed, how many
//     times it was retried, when it may run again, etc. Records live only
//     while a cause (create, update, delete, resume) is being handled; they
//     are purged when it is fully handled, so an object that was handled in
//     a single cycle never keeps a record.
//   - The diff-base (DiffBaseStorage): the "essence" of the object as it was
//     when it was last fully handled, used to detect what changed since.
//
// # The contract
//
// Storages never modify the body they are given and never talk to the API
// server: reads come from the body, writes go into a patches.Patch (a JSON
// merge patch), where a nil value means "delete this key". Storages hold
// only configuration, never per-object state; they are safe for concurrent
// use as long as their configuration is not changed (patches themselves are
// not safe for concurrent use).
//
// Reads tolerate absence and report corruption: Fetch returns (nil, nil)
// when there is nothing stored (including a JSON null), and (nil, err) when
// something is stored but cannot be decoded; the caller is expected to log
// the error and treat the state as absent.
//
// # Keys
//
// Annotation keys are formed from a prefix (default "kopf.zalando.org") and
// a handler id: see SafeID, KeyV2, KeyV1, Keys and Suffix. Both the V2 and
// (by default) the V1 key are written, and both are read, V2 first. For a
// ReplicaSet owned by a Deployment, every annotation key gets the "-ofDRS"
// suffix (before shortening), because Kubernetes copies the Deployment's
// annotations onto its ReplicaSets. Keys inside the status stanza
// (StatusProgressStorage, StatusDiffBaseStorage) are never suffixed, as in
// Kopf.
//
// # Encoding
//
// Values are written as compact JSON, byte-for-byte as Python's
// json.dumps(..., separators=(',', ':')) writes them in Kopf: progress
// records have Kopf's fixed field order; the diff-base essence has the key
// order of Kopf's essence of a custom resource (see EncodeEssence: the
// body's fields sorted, as the API server sends them, then metadata with
// labels before annotations, then the fields of field handlers); floats are
// written as Python's repr ("1.25e-05", "1e-07", "1.0", "1e+16"), except
// integral ones beyond the int64 range, which Python reads as integers;
// non-ASCII characters are escaped as \uXXXX, and "<", ">", "&" are not
// escaped. Only the essences of built-in resources, whose fields the API
// server writes in the order of their Go structs, differ in key order (Kopf
// compares decoded values, so this is not a difference that matters).
// Timestamps are written as "2026-01-01T00:00:00.000000+00:00" (see
// FormatTime) and read in any of the forms Kopf ever wrote (see ParseTime).
package progress
