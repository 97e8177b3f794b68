package progress

import (
	"fmt"
	"strings"
	"time"
)

// FormatTime renders t as Kopf (Python's isoformat with microseconds) does
// for timezone-aware UTC datetimes: "2026-01-01T00:00:00.000000+00:00".
// The time is converted to UTC and truncated (not rounded) to microseconds.
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"
}

var timeLayouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
}

// ParseTime parses any timestamp Kopf has written, and a bit more: an
// optional fractional part of any length (after "." or ","), an optional
// zone ("Z" or "±hh:mm"), and "T" or a space between date and time. A
// timestamp without a zone (as Kopf wrote before 1.40:
// "2020-02-14T16:58:25.396364") is taken as UTC. The result is in UTC.
// A time whose year in UTC is outside 1-9999 is an error, as in Python's
// datetime (Kopf's): FormatTime could not write it back in a form that
// ParseTime reads ("0001-01-01T00:30:00+01:00" is in year 0 in UTC).
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if y := t.UTC().Year(); y < 1 || y > 9999 {
				return time.Time{}, fmt.Errorf("timestamp %q is out of range (year %d in UTC)", s, y)
			}
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unrecognised timestamp %q", s)
}
