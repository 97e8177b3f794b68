package progress

import (
	"testing"
	"time"
)

func TestFormatTime(t *testing.T) {
	tests := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "2026-01-01T00:00:00.000000+00:00"},
		{time.Date(2026, 6, 3, 12, 0, 0, 100000000, time.UTC), "2026-06-03T12:00:00.100000+00:00"},
		{time.Date(2020, 2, 14, 16, 58, 25, 396364999, time.UTC), "2020-02-14T16:58:25.396364+00:00"},
		{time.Date(2026, 1, 1, 2, 0, 0, 0, time.FixedZone("X", 2*3600)), "2026-01-01T00:00:00.000000+00:00"},
	}
	for _, tt := range tests {
		if got := FormatTime(tt.t); got != tt.want {
			t.Errorf("FormatTime(%v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	base := time.Date(2020, 2, 14, 16, 58, 25, 396364000, time.UTC)
	tests := []struct {
		s       string
		want    time.Time
		wantErr bool
	}{
		{"2020-02-14T16:58:25.396364+00:00", base, false},
		{"2020-02-14T16:58:25.396364", base, false},
		{"2020-02-14T16:58:25.396364Z", base, false},
		{"2020-02-14T18:58:25.396364+02:00", base, false},
		{"2020-02-14T16:58:25,396364", base, false},
		{"2020-02-14 16:58:25.396364", base, false},
		{"2020-02-14T16:58:25.3+00:00", time.Date(2020, 2, 14, 16, 58, 25, 300000000, time.UTC), false},
		{"2020-02-14T16:58:25", time.Date(2020, 2, 14, 16, 58, 25, 0, time.UTC), false},
		{"2020-02-14T16:58:25Z", time.Date(2020, 2, 14, 16, 58, 25, 0, time.UTC), false},
		{" 2020-02-14T16:58:25Z\n", time.Date(2020, 2, 14, 16, 58, 25, 0, time.UTC), false},
		{"", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"2020-02-14", time.Time{}, true},
		{"2020-02-14T16:58:25+0000x", time.Time{}, true},
		{"0001-01-01T00:00:00Z", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"9999-12-31T23:59:59.999999Z", time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC), false},
		// Out of range in UTC: FormatTime would write "-0001-..." and
		// "10000-...", which no ParseTime reads (found by FuzzDecodeRecord).
		{"0000-01-01T00:00:00Z", time.Time{}, true},
		{"0001-01-01T00:30:00+01:00", time.Time{}, true},
		{"9999-12-31T23:59:59-01:00", time.Time{}, true},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.s)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseTime(%q) error = %v, wantErr %v", tt.s, err, tt.wantErr)
			continue
		}
		if !got.Equal(tt.want) || (!tt.wantErr && got.Location() != time.UTC) {
			t.Errorf("ParseTime(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestFormatParseRoundTrip(t *testing.T) {
	now := time.Now().Truncate(time.Microsecond)
	got, err := ParseTime(FormatTime(now))
	if err != nil || !got.Equal(now) {
		t.Fatalf("round trip of %v gave %v, %v", now, got, err)
	}
}
