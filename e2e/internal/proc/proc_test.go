package proc

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStopKillAndLog(t *testing.T) {
	dir := t.TempDir()
	// A shell that exits cleanly on SIGTERM, once it has said it is ready.
	term := Start(t, "/bin/sh", Options{
		Log:  filepath.Join(dir, "term.log"),
		Env:  []string{"GREETING=ready"},
		Args: []string{"-c", `trap 'echo bye; exit 0' TERM; echo "$GREETING"; while :; do sleep 0.05; done`},
	})
	if term.Name != "term.log" {
		t.Errorf("Name = %q, want the log's base name", term.Name)
	}
	term.WaitLog(t, "ready", 10*time.Second)
	term.Stop(t, 10*time.Second)
	if code := term.ExitCode(); code != 0 {
		t.Errorf("exit code after Stop = %d, want 0", code)
	}
	if !strings.Contains(term.Logs(), "bye") {
		t.Errorf("the log lacks the shell's last line: %q", term.Logs())
	}

	sleeper := Start(t, "/bin/sleep", Options{Name: "sleeper", Log: filepath.Join(dir, "sleep.log"), Args: []string{"60"}})
	sleeper.Kill(t)
	if code := sleeper.ExitCode(); code != -1 {
		t.Errorf("exit code after Kill = %d, want -1 (a signal)", code)
	}
	if sleeper.Exited().IsZero() {
		t.Error("Exited is zero after the exit")
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		name, data string
		n          int
		want       string
	}{
		{"short", "a\nb\n", 10, "a\nb\n"},
		{"exact", "abcd", 4, "abcd"},
		{"from a line", "line one\nline two\n", 12, "...(9 bytes cut)\nline two\n"},
		{"no newline", "abcdef", 3, "...(3 bytes cut)\ndef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tail([]byte(tt.data), tt.n); got != tt.want {
				t.Errorf("Tail(%q, %d) = %q, want %q", tt.data, tt.n, got, tt.want)
			}
		})
	}
}
