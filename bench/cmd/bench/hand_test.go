package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeepHandSections(t *testing.T) {
	old := strings.Join([]string{
		"# kopf-go benchmark (issue #5)",
		"",
		"## How it is measured",
		"",
		"old text",
		"",
		"## CPU profiles",
		"",
		"```",
		"## not a heading inside a fence",
		"```",
		"",
		"## Daemons and timers (issue 12)",
		"",
		"| a | b |",
		"",
		"## Latency (ms)",
		"",
		"old latency",
		"",
		"## Indices (issue 14)",
		"",
		"by hand",
		"",
	}, "\n")
	tests := []struct {
		name, old string
		want      []string
		notWant   []string
	}{
		{"hand sections kept in order", old,
			[]string{"## Daemons and timers (issue 12)\n\n| a | b |\n\n## Indices (issue 14)\n\nby hand\n"},
			[]string{"old text", "old latency", "not a heading"}},
		{"no file", "", nil, []string{"Daemons"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "RESULTS.md")
			if tt.old != "" {
				if err := os.WriteFile(path, []byte(tt.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := keepHandSections(path, "# new\n\n## How it is measured\n\nnew text\n")
			if !strings.HasPrefix(got, "# new\n\n## How it is measured\n\nnew text\n") {
				t.Errorf("the generated text is not first:\n%s", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in:\n%s", w, got)
				}
			}
		})
	}
}
