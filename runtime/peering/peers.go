// Package peering is Kopf's peering (kopf/_core/engines/peering.py): the
// operators that serve the same objects keep each a record in a
// KopfPeering (per namespace) or ClusterKopfPeering object,
//
//	status:
//	  "<identity>": {"priority": 0, "lifetime": 60, "lastseen": "2026-06-03T12:00:00.123456+00:00"}
//
// renewed by a keep-alive, removed on exit, and removed by any peer once
// expired (lastseen+lifetime ≤ now). An operator pauses while a live peer
// has a higher priority. The records are Kopf's to the byte, so that Kopf
// and kopf-go operators on one peering object pause each other.
//
// Beyond Kopf, kopf-go replicas of equal priority do not all freeze: they
// elect one active replica through a coordination.k8s.io Lease (Elector),
// and the others stand by, paused, with their watches warm.
//
// A pause is a set of named toggles (Toggles, Kopf's ToggleSet(any)): the
// operator is paused while any is on.
package peering

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kopf-go/kopf/runtime/leases"
)

// Identity is an operator's key in the peering object's status.
type Identity string

// DetectOwnID is Kopf's detect_own_id (leases.DetectOwnID, the identity
// of every Lease a replica holds): $POD_ID if set, else
// "user@host/YYYYmmddHHMMSS/xyz" for an operator, or "user@host" for the
// freeze and resume commands (manual).
func DetectOwnID(manual bool) Identity {
	return Identity(leases.DetectOwnID(manual))
}

// DefaultLifetime is what Kopf assumes of a record without a lifetime.
const DefaultLifetime = 60 * time.Second

// Peer is one record of the peering object's status (Kopf's Peer).
type Peer struct {
	Identity Identity
	Priority int
	Lifetime time.Duration // whole seconds
	LastSeen time.Time     // with the offset it was written with
}

// Deadline is when the record expires: LastSeen + Lifetime.
func (p Peer) Deadline() time.Time { return p.LastSeen.Add(p.Lifetime) }

// IsDead reports whether the record has expired at now (Kopf's is_dead:
// deadline ≤ now); a record of lifetime 0 is dead at once.
func (p Peer) IsDead(now time.Time) bool { return !p.Deadline().After(now) }

// Record is the record as Kopf writes it (Peer.as_dict): priority,
// lifetime in whole seconds, lastseen in Python's isoformat.
func (p Peer) Record() map[string]any {
	return map[string]any{
		"priority": p.Priority,
		"lifetime": int(p.Lifetime / time.Second),
		"lastseen": IsoFormat(p.LastSeen),
	}
}

// String is Kopf's repr of a peer, as its log lines show it:
// <Peer id: priority=0, lifetime=60, lastseen='2026-06-03T12:00:00.123456+00:00'>.
func (p Peer) String() string {
	return fmt.Sprintf("<Peer %s: priority=%d, lifetime=%d, lastseen='%s'>",
		p.Identity, p.Priority, int(p.Lifetime/time.Second), IsoFormat(p.LastSeen))
}

// List is peers as Kopf logs a list of them: [<Peer ...>, <Peer ...>].
type List []Peer

func (l List) String() string {
	parts := make([]string, len(l))
	for i, p := range l {
		parts[i] = p.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// IsoFormat is Python's datetime.isoformat() of an aware time:
// 2026-06-03T12:00:00.123456+00:00, without the fraction when the
// microseconds are 0.
func IsoFormat(t time.Time) string {
	t = t.Truncate(time.Microsecond)
	layout := "2006-01-02T15:04:05.000000-07:00"
	if t.Nanosecond() == 0 {
		layout = "2006-01-02T15:04:05-07:00"
	}
	return t.Format(layout)
}

// parseTime reads a lastseen as Kopf's iso8601.parse_date does: RFC 3339
// with or without a fraction, "Z" or an offset; none means UTC.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("lastseen %q is not an ISO 8601 time", s)
}

// Parse reads the peers of a peering object's status, as Kopf's Peer():
// a missing priority is 0, a missing lifetime 60 s, a missing lastseen
// now; unknown fields are ignored. A priority beyond an int's range is
// taken as the int nearest to it (Python's ints have no bounds: the order
// of priorities is kept), a lifetime beyond a time.Duration's (292 years)
// as the longest (or shortest) whole seconds that one holds. A record that cannot be read (not an
// object, a priority that is no integer) is skipped, reported in bad.
func Parse(status map[string]any, now time.Time) (peers List, bad []string) {
	for id, raw := range status {
		rec, ok := raw.(map[string]any)
		if !ok {
			bad = append(bad, id)
			continue
		}
		p := Peer{Identity: Identity(id), Lifetime: DefaultLifetime, LastSeen: now}
		var err error
		if v, ok := rec["priority"]; ok && v != nil {
			if p.Priority, err = toInt(v); err != nil {
				bad = append(bad, id)
				continue
			}
		}
		if v, ok := rec["lifetime"]; ok && v != nil {
			n, err := toInt(v)
			if err != nil {
				bad = append(bad, id)
				continue
			}
			p.Lifetime = time.Duration(min(max(n, -maxLifetime), maxLifetime)) * time.Second
		}
		if v, ok := rec["lastseen"].(string); ok {
			if p.LastSeen, err = parseTime(v); err != nil {
				bad = append(bad, id)
				continue
			}
		}
		peers = append(peers, p)
	}
	return peers, bad
}

// maxLifetime is the most whole seconds a time.Duration holds.
const maxLifetime = int(math.MaxInt64 / time.Second)

// toInt is Python's int() of a JSON value: a number (truncated, and
// clamped to an int's range) or a string of an integer.
func toInt(v any) (int, error) {
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return 0, fmt.Errorf("%v is not an integer", x)
		case x >= math.MaxInt: // float64(math.MaxInt) is 2^63, out of range
			return math.MaxInt, nil
		case x < math.MinInt:
			return math.MinInt, nil
		}
		return int(x), nil
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if errors.Is(err, strconv.ErrRange) {
			return n, nil // the nearest int
		}
		return n, err
	}
	return 0, fmt.Errorf("%v is not an integer", v)
}
