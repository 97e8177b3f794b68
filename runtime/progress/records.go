package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Record is the persisted progress of one handler for one cause, Kopf's
// ProgressRecord. A nil pointer or nil slice means "not set" and is not
// written.
type Record struct {
	// Started is when the handler was first invoked for this cause.
	Started *time.Time
	// Stopped is when the handler finally succeeded or failed.
	Stopped *time.Time
	// Delayed is when the handler may be invoked again (a retry).
	Delayed *time.Time
	// Purpose is the cause that started the handling: create, update,
	// delete or resume.
	Purpose *string
	// Retries is how many times the handler has been invoked so far.
	Retries int
	// Success is true once the handler has finally succeeded.
	Success bool
	// Failure is true once the handler has finally failed (no more retries).
	Failure bool
	// Message is the last error's message.
	Message *string
	// Subrefs are the ids of the sub-handlers of this handler.
	Subrefs []string
}

// recordFields are the JSON field names of a Record, in Kopf's order.
var recordFields = []string{
	"started", "stopped", "delayed", "purpose", "retries", "success", "failure", "message", "subrefs",
}

// MarshalJSON encodes the record as Kopf writes it into an annotation:
// compact JSON with the fields in the order started, stopped, delayed,
// purpose, retries, success, failure, message, subrefs; nil fields are
// omitted, while retries, success and failure are always present.
// Timestamps are formatted with FormatTime; strings are escaped as Python
// does (non-ASCII as \uXXXX, no HTML escaping). A non-nil empty Subrefs is
// written as []. It never fails.
//
// Note that json.Marshal re-escapes "<", ">" and "&" in the output of
// marshalers; call MarshalJSON (or Encode) directly for Kopf's exact bytes.
func (r Record) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	field := func(name string) {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		buf.WriteByte('"')
		buf.WriteString(name)
		buf.WriteString(`":`)
	}
	for _, f := range []struct {
		name string
		t    *time.Time
	}{{"started", r.Started}, {"stopped", r.Stopped}, {"delayed", r.Delayed}} {
		if f.t != nil {
			field(f.name)
			buf.Write(encodeString(FormatTime(*f.t)))
		}
	}
	if r.Purpose != nil {
		field("purpose")
		buf.Write(encodeString(*r.Purpose))
	}
	field("retries")
	buf.WriteString(strconv.Itoa(r.Retries))
	field("success")
	buf.WriteString(strconv.FormatBool(r.Success))
	field("failure")
	buf.WriteString(strconv.FormatBool(r.Failure))
	if r.Message != nil {
		field("message")
		buf.Write(encodeString(*r.Message))
	}
	if r.Subrefs != nil {
		field("subrefs")
		buf.WriteByte('[')
		for i, ref := range r.Subrefs {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(encodeString(ref))
		}
		buf.WriteByte(']')
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Encode returns the record's JSON (see MarshalJSON) as a string.
func (r Record) Encode() string {
	b, _ := r.MarshalJSON()
	return string(b)
}

// UnmarshalJSON decodes a record as any Kopf version wrote it. Missing
// fields and null values leave the zero value (nil, 0, false); unknown
// fields are ignored; timestamps are parsed with ParseTime; retries may be
// written as an integral float (e.g. 1.0). A JSON null leaves the record
// unchanged. Anything else that does not fit (not an object, a field of a
// wrong type, an unparseable timestamp) is an error, and the record is
// left unchanged.
func (r *Record) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("progress record: %w", err)
	}
	var out Record
	var err error
	fail := func(name string, e error) error {
		return fmt.Errorf("progress record: field %q: %w", name, e)
	}
	for name, dst := range map[string]**time.Time{"started": &out.Started, "stopped": &out.Stopped, "delayed": &out.Delayed} {
		var s *string
		if err = decodeField(raw, name, &s); err != nil {
			return fail(name, err)
		}
		if s != nil {
			t, err := ParseTime(*s)
			if err != nil {
				return fail(name, err)
			}
			*dst = &t
		}
	}
	if err = decodeField(raw, "purpose", &out.Purpose); err != nil {
		return fail("purpose", err)
	}
	if err = decodeField(raw, "message", &out.Message); err != nil {
		return fail("message", err)
	}
	if err = decodeField(raw, "success", &out.Success); err != nil {
		return fail("success", err)
	}
	if err = decodeField(raw, "failure", &out.Failure); err != nil {
		return fail("failure", err)
	}
	if err = decodeField(raw, "subrefs", &out.Subrefs); err != nil {
		return fail("subrefs", err)
	}
	var retries *float64
	if err = decodeField(raw, "retries", &retries); err != nil {
		return fail("retries", err)
	}
	if retries != nil {
		if *retries != math.Trunc(*retries) || math.Abs(*retries) > math.MaxInt32 {
			return fail("retries", fmt.Errorf("not an integer: %v", *retries))
		}
		out.Retries = int(*retries)
	}
	*r = out
	return nil
}

// decodeField decodes raw[name] into dst unless it is missing or null.
func decodeField(raw map[string]json.RawMessage, name string, dst any) error {
	value, ok := raw[name]
	if !ok || string(bytes.TrimSpace(value)) == "null" {
		return nil
	}
	return json.Unmarshal(value, dst)
}

// DecodeRecord decodes a record from its JSON (as stored in an
// annotation). It returns (nil, nil) for a JSON null and (nil, err) for
// anything malformed (see UnmarshalJSON).
func DecodeRecord(s string) (*Record, error) {
	if string(bytes.TrimSpace([]byte(s))) == "null" {
		return nil, nil
	}
	var r Record
	if err := r.UnmarshalJSON([]byte(s)); err != nil {
		return nil, err
	}
	return &r, nil
}

// recordFromValue converts a record kept as a JSON-like map (in the status
// stanza) into a Record; nil gives (nil, nil), a non-map is an error.
func recordFromValue(v any) (*Record, error) {
	if v == nil {
		return nil, nil
	}
	if _, ok := asMap(v); !ok {
		return nil, errors.New("progress record: not a map")
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("progress record: %w", err)
	}
	return DecodeRecord(string(data))
}

// asMap returns the record as a JSON-like map with all nine fields, unset
// ones as nil, as Kopf writes records into the status stanza: the explicit
// nulls make a merge patch remove what a previous record had set.
func (r Record) asMap() map[string]any {
	m := make(map[string]any, len(recordFields))
	for name, t := range map[string]*time.Time{"started": r.Started, "stopped": r.Stopped, "delayed": r.Delayed} {
		if t != nil {
			m[name] = FormatTime(*t)
		} else {
			m[name] = nil
		}
	}
	m["purpose"] = strOrNil(r.Purpose)
	m["message"] = strOrNil(r.Message)
	m["retries"] = int64(r.Retries)
	m["success"] = r.Success
	m["failure"] = r.Failure
	if r.Subrefs != nil {
		refs := make([]any, len(r.Subrefs))
		for i, ref := range r.Subrefs {
			refs[i] = ref
		}
		m["subrefs"] = refs
	} else {
		m["subrefs"] = nil
	}
	return m
}

func strOrNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// Equal reports whether two records would be persisted identically
// (timestamps compared at microsecond precision, as stored). Two nil
// records are equal; a nil and a non-nil one are not. A nil and an empty
// Subrefs differ, since the latter is written as [].
func (r *Record) Equal(o *Record) bool {
	if r == nil || o == nil {
		return r == nil && o == nil
	}
	return r.Encode() == o.Encode()
}

// looksLikeRecord reports whether s is a JSON object with at least one key
// and only the keys of a progress record; used to tell records apart from
// other values under the same annotation prefix.
func looksLikeRecord(s string) bool {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil || len(raw) == 0 {
		return false
	}
	for k := range raw {
		if !slices.Contains(recordFields, k) {
			return false
		}
	}
	return true
}
