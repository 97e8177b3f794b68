package peering

import (
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestIsoFormat(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 6, 3, 12, 0, 0, 123456789, time.UTC), "2026-06-03T12:00:00.123456+00:00"},
		{time.Date(2026, 6, 3, 12, 0, 0, 0, time.UTC), "2026-06-03T12:00:00+00:00"}, // Python omits zero microseconds
		{time.Date(2026, 6, 3, 12, 0, 0, 5000, time.FixedZone("", 2*3600)), "2026-06-03T12:00:00.000005+02:00"},
	}
	for _, tt := range tests {
		if got := IsoFormat(tt.in); got != tt.want {
			t.Errorf("IsoFormat(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	now := time.Date(2026, 6, 3, 12, 0, 30, 0, time.UTC)
	status := map[string]any{
		// The wire format's literal record (kopf-wire-format.md).
		"kopf-a": map[string]any{"priority": float64(0), "lifetime": float64(60), "lastseen": "2026-06-03T12:00:00.123456+00:00"},
		"kopf-b": map[string]any{"priority": float64(100), "lifetime": float64(10), "lastseen": "2026-06-03T12:00:00Z"},
		"kopf-c": map[string]any{}, // Kopf's defaults: 0, 60 s, now
		"kopf-d": map[string]any{"priority": "666", "lastseen": "2026-06-03T12:00:00", "future": true},
		"broken": "not an object",
		"badpri": map[string]any{"priority": "high"},
	}
	peers, bad := Parse(status, now)
	got := map[Identity]Peer{}
	for _, p := range peers {
		got[p.Identity] = p
	}
	if len(bad) != 2 {
		t.Errorf("bad = %v, want broken and badpri", bad)
	}
	tests := []struct {
		id       Identity
		priority int
		lifetime time.Duration
		dead     bool
		repr     string
	}{
		{"kopf-a", 0, 60 * time.Second, false, "<Peer kopf-a: priority=0, lifetime=60, lastseen='2026-06-03T12:00:00.123456+00:00'>"},
		{"kopf-b", 100, 10 * time.Second, true, "<Peer kopf-b: priority=100, lifetime=10, lastseen='2026-06-03T12:00:00+00:00'>"},
		{"kopf-c", 0, 60 * time.Second, false, "<Peer kopf-c: priority=0, lifetime=60, lastseen='2026-06-03T12:00:30+00:00'>"},
		{"kopf-d", 666, 60 * time.Second, false, "<Peer kopf-d: priority=666, lifetime=60, lastseen='2026-06-03T12:00:00+00:00'>"},
	}
	for _, tt := range tests {
		p, ok := got[tt.id]
		if !ok {
			t.Errorf("%s is not parsed", tt.id)
			continue
		}
		if p.Priority != tt.priority || p.Lifetime != tt.lifetime || p.IsDead(now) != tt.dead {
			t.Errorf("%s = %+v (dead %v), want priority %d, lifetime %s, dead %v", tt.id, p, p.IsDead(now), tt.priority, tt.lifetime, tt.dead)
		}
		if p.String() != tt.repr {
			t.Errorf("repr = %s, want %s", p, tt.repr)
		}
	}
}

func TestRecord(t *testing.T) {
	p := Peer{Identity: "x", Priority: 5, Lifetime: 60 * time.Second, LastSeen: time.Date(2026, 6, 3, 12, 0, 0, 123456000, time.UTC)}
	rec := p.Record()
	want := map[string]any{"priority": 5, "lifetime": 60, "lastseen": "2026-06-03T12:00:00.123456+00:00"}
	if len(rec) != len(want) {
		t.Fatalf("record = %v, want %v", rec, want)
	}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("record[%s] = %#v, want %#v", k, rec[k], v)
		}
	}
	if !(Peer{Lifetime: 0, LastSeen: time.Now()}).IsDead(time.Now()) {
		t.Error("a record of lifetime 0 is not dead at once")
	}
}

func TestKeepaliveInterval(t *testing.T) {
	tests := []struct {
		lifetime time.Duration
		lo, hi   time.Duration
	}{
		{60 * time.Second, 50 * time.Second, 55 * time.Second},
		{6 * time.Second, time.Second, time.Second},
		{1 * time.Second, time.Second, time.Second},
		{0, time.Second, time.Second},
	}
	for _, tt := range tests {
		for range 50 {
			if d := KeepaliveInterval(tt.lifetime); d < tt.lo || d > tt.hi {
				t.Fatalf("KeepaliveInterval(%s) = %s, want within [%s, %s]", tt.lifetime, d, tt.lo, tt.hi)
			}
		}
	}
}

func TestDetectOwnID(t *testing.T) {
	t.Run("user@host/time/rnd", func(t *testing.T) {
		t.Setenv("POD_ID", "")
		os.Unsetenv("POD_ID")
		id := string(DetectOwnID(false))
		if !regexp.MustCompile(`^[^@/]+@[^/]+/\d{14}/[a-z0-9]{3}$`).MatchString(id) {
			t.Errorf("operator id = %q, want user@host/YYYYmmddHHMMSS/xyz", id)
		}
		manual := string(DetectOwnID(true))
		if !regexp.MustCompile(`^[^@/]+@[^/]+$`).MatchString(manual) || !strings.HasPrefix(id, manual+"/") {
			t.Errorf("manual id = %q, want user@host, the prefix of %q", manual, id)
		}
	})
	t.Run("POD_ID", func(t *testing.T) {
		t.Setenv("POD_ID", "operator-7f9c")
		if id := DetectOwnID(false); id != "operator-7f9c" {
			t.Errorf("id = %q", id)
		}
	})
}

func TestToggles(t *testing.T) {
	var changes []bool
	s := &Toggles{OnChange: func(p bool) { changes = append(changes, p) }}
	a := s.Make("a", false)
	b := s.Make("b", true)
	a.Set(true)
	b.Set(false)
	a.Set(false)
	b.Set(true)
	b.Drop()
	want := []bool{true, false, true, false}
	if len(changes) != len(want) {
		t.Fatalf("changes = %v, want %v", changes, want)
	}
	for i := range want {
		if changes[i] != want[i] {
			t.Fatalf("changes = %v, want %v", changes, want)
		}
	}
}

// Priorities and lifetimes beyond Go's ranges keep their meaning: the
// highest priority stays the highest, a lifetime of centuries does not
// overflow into a dead (or a random) one. Found by FuzzParse.
func TestParseOutOfRange(t *testing.T) {
	now := time.Date(2026, 6, 3, 12, 0, 30, 0, time.UTC)
	tests := []struct {
		rec      map[string]any
		priority int
		lifetime time.Duration
	}{
		{map[string]any{"priority": 1e300, "lifetime": 1e12}, math.MaxInt, time.Duration(maxLifetime) * time.Second},
		{map[string]any{"priority": -1e300, "lifetime": -1e12}, math.MinInt, -time.Duration(maxLifetime) * time.Second},
		{map[string]any{"priority": "99999999999999999999", "lifetime": "-99999999999999999999"}, math.MaxInt, -time.Duration(maxLifetime) * time.Second},
		{map[string]any{"priority": float64(1 << 63)}, math.MaxInt, DefaultLifetime},
	}
	for _, tt := range tests {
		peers, bad := Parse(map[string]any{"p": tt.rec}, now)
		if len(peers) != 1 || len(bad) != 0 {
			t.Fatalf("%v: peers %v, bad %v", tt.rec, peers, bad)
		}
		if p := peers[0]; p.Priority != tt.priority || p.Lifetime != tt.lifetime {
			t.Errorf("%v: priority %d, lifetime %s; want %d, %s", tt.rec, p.Priority, p.Lifetime, tt.priority, tt.lifetime)
		}
	}
}
