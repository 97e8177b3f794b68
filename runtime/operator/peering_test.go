package operator

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/kopf-go/kopf/runtime/logging"
)

func TestWarnPeering(t *testing.T) {
	const base = "Peering is not supported yet; running in the standalone mode."
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"standalone: no warning", Options{Standalone: true, PeeringName: "p", Priority: 1}, ""},
		{"nothing given", Options{}, base + "\n"},
		{"a name", Options{PeeringName: "example"}, base + " Ignored: the peering \"example\".\n"},
		{"--dev", Options{Priority: 666}, base + " Ignored: the priority 666.\n"},
		{"both", Options{PeeringName: "example", Priority: 100}, base + " Ignored: the peering \"example\" and the priority 100.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			warnPeering(logging.New(&out, logging.Plain, slog.LevelInfo), tt.opts)
			if out.String() != tt.want {
				t.Errorf("logged %q, want %q", out.String(), tt.want)
			}
		})
	}
}
