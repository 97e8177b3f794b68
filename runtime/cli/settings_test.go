package cli

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/settings"
)

// TestSettingFlags: --setting and $KOPF_RUN_SETTINGS set the operator's
// settings by Kopf's names, over those set in code, which stay unchanged.
func TestSettingFlags(t *testing.T) {
	code := settings.Default()
	code.Execution.CleanupTimeout = 7 * time.Second
	op, _, err := parseRun(t, []string{"--setting", "execution.default_backoff=1.5", "--setting=networking.max_in_flight=3",
		"--setting", "persistence.finalizer=example.com/x"}, Options{Settings: code})
	if err != nil {
		t.Fatal(err)
	}
	s := op.Settings
	if s.Execution.DefaultBackoff != 1500*time.Millisecond || s.Networking.MaxInFlight != 3 ||
		s.Persistence.Finalizer != "example.com/x" || s.Execution.CleanupTimeout != 7*time.Second {
		t.Errorf("settings: %+v, %+v, %q", s.Execution, s.Networking, s.Persistence.Finalizer)
	}
	if code.Execution.DefaultBackoff != settings.Default().Execution.DefaultBackoff {
		t.Error("the settings set in code were changed in place")
	}

	t.Setenv("KOPF_RUN_SETTINGS", "execution.default_backoff=2m execution.cleanup_timeout=3")
	op, _, err = parseRun(t, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := op.Settings.Execution; s.DefaultBackoff != 2*time.Minute || s.CleanupTimeout != 3*time.Second {
		t.Errorf("from $KOPF_RUN_SETTINGS: %+v", s)
	}
}

// posting.level takes Kopf's level names and Python's numbers of them.
func TestSettingLevel(t *testing.T) {
	for value, want := range map[string]slog.Level{
		"DEBUG": slog.LevelDebug, "info": slog.LevelInfo, "WARNING": slog.LevelWarn, "WARN": slog.LevelWarn,
		"ERROR": slog.LevelError, "CRITICAL": slog.LevelError + 4, "ERROR+2": slog.LevelError + 2,
		"10": slog.LevelDebug, "20": slog.LevelInfo, "30": slog.LevelWarn, "40": slog.LevelError, "25": slog.LevelInfo + 2,
	} {
		op, _, err := parseRun(t, []string{"--setting", "posting.level=" + value}, Options{})
		if err != nil || op.Settings.Posting.Level != want {
			t.Errorf("posting.level=%s: %v, %v; want %v", value, op.Settings.Posting.Level, err, want)
		}
	}
}

func TestSettingFlagsRejected(t *testing.T) {
	for _, tt := range []struct{ arg, want string }{
		{"execution.default_backoff", "want group.name=value"},
		{"execution.no_such=1", "no setting execution.no_such"},
		{"execution.default_backoff.x=1", "execution.default_backoff is not a group of settings"},
		{"execution.default_backoff=soon", `want seconds (1.5) or a duration (90s, 2m), got "soon"`},
		{"networking.max_in_flight=1.5", `want an integer, got "1.5"`},
		{"persistence.progress_storage=x", "is set in code only"},
		{"posting.level=LOUD", `want a level (DEBUG, INFO, WARNING, ERROR, CRITICAL) or Python's number of one (20), got "LOUD"`},
	} {
		t.Run(tt.arg, func(t *testing.T) {
			_, _, err := parseRun(t, []string{"--setting", tt.arg}, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
