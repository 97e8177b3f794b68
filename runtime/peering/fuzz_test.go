package peering

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// FuzzParse: the status of a peering object (which any peer, or anyone
// allowed to patch it, writes) is read without a panic, each record into a
// peer or the bad list (never both, never neither), and a peer's record as
// this operator writes it back (Record, through JSON as the API server
// stores it) reads as the same peer.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"kopf-a":{"priority":0,"lifetime":60,"lastseen":"2026-06-03T12:00:00.123456+00:00"}}`,
		`{"kopf-b":{"priority":100.7,"lifetime":"10","lastseen":"2026-06-03T12:00:00Z"},"kopf-c":{},"kopf-d":{"priority":"666","lastseen":"2026-06-03 12:00:00","x":1}}`,
		`{"broken":"not an object","badpri":{"priority":"high"},"n":null,"l":[1]}`,
		`{"big":{"priority":1e300,"lifetime":1e12}}`,
		`{"neg":{"priority":-9223372036854775808,"lifetime":-5,"lastseen":"0000-01-01T00:00:00-23:59"}}`,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 6, 3, 12, 0, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		var status map[string]any
		if utiljson.Unmarshal(data, &status) != nil { // as client-go decodes the object
			return
		}
		peers, bad := Parse(status, now)
		ids := slices.Clone(bad)
		for _, p := range peers {
			ids = append(ids, string(p.Identity))
		}
		slices.Sort(ids)
		if len(ids) != len(status) || len(slices.Compact(ids)) != len(status) {
			t.Fatalf("%s: peers %v and bad %v are not the records, each once", data, peers, bad)
		}
		for _, p := range peers {
			raw, err := json.Marshal(map[string]any{string(p.Identity): p.Record()})
			if err != nil {
				t.Fatalf("%v: its record does not encode: %v", p, err)
			}
			var back map[string]any
			if err := utiljson.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			again, bad := Parse(back, now)
			if len(again) != 1 || len(bad) != 0 {
				t.Fatalf("%s: %v written as %s is read as %v, bad %v", data, p, raw, again, bad)
			}
			q := again[0]
			if q.Priority != p.Priority || q.Lifetime != p.Lifetime || !q.LastSeen.Equal(p.LastSeen.Truncate(time.Microsecond)) {
				t.Fatalf("%s: %v written as %s is read as %v", data, p, raw, q)
			}
		}
	})
}
