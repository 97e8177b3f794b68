package cli

import (
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/kopf-go/kopf/runtime/settings"
)

// setSettings applies the --setting assignments, "group.name=value" in
// Kopf's names (execution.default_backoff=1.5, posting.level=WARNING...),
// to a copy of s (nil: the defaults) and returns it. A name is matched
// to the Go field by its letters, without underscores and in any case
// (default_backoff is DefaultBackoff); a group is a field of Settings,
// then of its struct. Values: durations as a number of seconds (Kopf's
// floats) or with a unit (1.5s, 2m), integers, floats, booleans (click's
// spellings), strings. Fields of other types (storages, callbacks) are
// set in code only: an assignment to one is an error, as is an unknown
// name.
func setSettings(s *settings.Settings, assignments []string) (*settings.Settings, error) {
	if len(assignments) == 0 {
		return s, nil
	}
	out := settings.Default()
	if s != nil {
		c := *s
		out = &c
	}
	for _, a := range assignments {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("--setting %q: want group.name=value, e.g. execution.default_backoff=1.5", a)
		}
		field, err := settingField(reflect.ValueOf(out).Elem(), strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("--setting %q: %w", a, err)
		}
		if err := setValue(field, strings.TrimSpace(value)); err != nil {
			return nil, fmt.Errorf("--setting %q: %w", a, err)
		}
	}
	return out, nil
}

// settingField finds the field of a dotted name in v, a struct.
func settingField(v reflect.Value, name string) (reflect.Value, error) {
	for i, part := range strings.Split(name, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, fmt.Errorf("%s is not a group of settings", strings.Join(strings.Split(name, ".")[:i], "."))
		}
		want := strings.ToLower(strings.ReplaceAll(part, "_", ""))
		found := false
		for j := range v.NumField() {
			if f := v.Type().Field(j); f.IsExported() && strings.ToLower(f.Name) == want {
				v, found = v.Field(j), true
				break
			}
		}
		if !found {
			return reflect.Value{}, fmt.Errorf("no setting %s", name)
		}
	}
	return v, nil
}

// setValue parses s into the field v, by its type.
func setValue(v reflect.Value, s string) error {
	switch {
	case v.Type() == reflect.TypeFor[slog.Level]():
		level, err := parseLevel(s)
		if err != nil {
			return err
		}
		v.SetInt(int64(level))
		return nil
	case v.Type() == reflect.TypeFor[time.Duration]():
		d, err := parseSeconds(s)
		if err != nil {
			return err
		}
		v.SetInt(int64(d))
		return nil
	case v.Kind() == reflect.Bool:
		b, err := parseClickBool(s)
		if err != nil {
			return err
		}
		v.SetBool(b)
		return nil
	case v.Kind() == reflect.String:
		v.SetString(s)
		return nil
	case v.CanInt():
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v.OverflowInt(n) {
			return fmt.Errorf("want an integer, got %q", s)
		}
		v.SetInt(n)
		return nil
	case v.CanFloat():
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("want a number, got %q", s)
		}
		v.SetFloat(f)
		return nil
	}
	return fmt.Errorf("a setting of type %s is set in code only (kopf.WithSettings)", v.Type())
}

// parseSeconds parses a duration: a number of seconds, as Kopf's
// settings are, or a Go duration (1.5s, 2m).
func parseSeconds(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want seconds (1.5) or a duration (90s, 2m), got %q", s)
	}
	return d, nil
}

// parseLevel parses a log level (posting.level): a name of Python's
// logging levels as Kopf's settings take them (DEBUG, INFO, WARNING,
// ERROR, CRITICAL, any case) or slog's (WARN, ERROR+2), or a number of
// Python's logging (10 DEBUG, 20 INFO, 30 WARNING, 40 ERROR, 50 CRITICAL;
// those between are levels between).
func parseLevel(s string) (slog.Level, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return slog.Level((n - 20) * 2 / 5), nil
	}
	switch strings.ToUpper(s) {
	case "WARNING":
		return slog.LevelWarn, nil
	case "CRITICAL", "FATAL":
		return slog.LevelError + 4, nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("want a level (DEBUG, INFO, WARNING, ERROR, CRITICAL) or Python's number of one (20), got %q", s)
	}
	return level, nil
}
