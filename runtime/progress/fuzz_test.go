package progress

import (
	"reflect"
	"testing"
)

// FuzzDecodeRecord: a progress record read back from an annotation (which
// anyone with write access to the object may have written) decodes or is
// an error, never a panic; what decodes is written back as it was read:
// its encoding (in an annotation, or in status) decodes to the same
// record.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range []string{
		`{"started":"2026-11-23T06:28:04.648039+00:00","purpose":"create","retries":1,"success":true,"failure":false}`,
		`{"started": "2020-02-14T16:58:25.396364", "stopped": "2020-02-14T16:58:25.401844", "retries": 1, "success": true}`,
		`{"delayed":"2026-01-01 00:00:00,5Z","retries":2.0,"message":"\u00e9\ud83d\ude00<&>","subrefs":["a/b",""]}`,
		`{"started":null,"retries":null,"subrefs":[]}`,
		`null`, `{}`, `[1]`, `{"retries":1e10}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := DecodeRecord(s)
		if err != nil || r == nil {
			return
		}
		enc := r.Encode()
		back, err := DecodeRecord(enc)
		if err != nil {
			t.Fatalf("%q decodes to %+v, whose encoding %s does not decode: %v", s, r, enc, err)
		}
		if !back.Equal(r) {
			t.Fatalf("%q decodes to %+v, encoded as %s, decoded back as %+v", s, r, enc, back)
		}
		// As the status storage writes it and reads it back.
		if fromStatus, err := recordFromValue(r.asMap()); err != nil || !fromStatus.Equal(r) {
			t.Fatalf("%q decodes to %+v, read back from status as %+v, %v", s, r, fromStatus, err)
		}
	})
}

// FuzzDecodeEssence: a diff-base read back from its annotation (or from
// status) decodes to an object or is an error, never a panic; what decodes
// encodes (Kopf's spelling), and that decodes to the same object.
func FuzzDecodeEssence(f *testing.F) {
	for _, s := range []string{
		`{"spec":{"duration":"1m","field":"value","items":["item1","item2"]},"metadata":{"labels":{"somelabel":"somevalue"},"annotations":{"someannotation":"somevalue"}}}` + "\n",
		`{"spec":{"n":[1,-1,1.5,1e2,-0.0,99999999999999999999,1e400,5e-324]}}`,
		`{"spec":{"s":"\u00e9\u2028\ud83d\ude00 \ud800 <&>","t":true,"f":false,"z":null,"o":{}}}`,
		`null`, `[]`, `{"a":1} {}`, `{"a":1,"a":2}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := decodeEssence(s)
		if err != nil || m == nil {
			return
		}
		enc, err := EncodeEssence(m)
		if err != nil {
			t.Fatalf("%q decodes to %#v, which does not encode: %v", s, m, err)
		}
		back, err := decodeEssence(enc)
		if err != nil {
			t.Fatalf("%q decodes to %#v, whose encoding %s does not decode: %v", s, m, enc, err)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("%q decodes to %#v, encoded as %s, decoded back as %#v", s, m, enc, back)
		}
	})
}
