package cli

import (
	"io"
	"net"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// The metrics address comes from the options set in code, unless
// --metrics-bind-address says another; an address in use stops the
// operator from starting, with the address named.
func TestRunMetricsAddress(t *testing.T) {
	busy := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ln.Close() })
		return ln.Addr().String()
	}
	inCode, onFlag := busy(), busy()
	tests := []struct {
		name string
		args []string
		opts Options
		want string // the address refused
	}{
		{"options only", []string{"run", "-A"}, Options{MetricsAddress: inCode}, inCode},
		{"the flag wins", []string{"run", "-A", "--metrics-bind-address", onFlag}, Options{MetricsAddress: inCode}, onFlag},
		{"the flag alone", []string{"run", "-A", "--metrics-bind-address=" + onFlag}, Options{}, onFlag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Config = &rest.Config{Host: "https://127.0.0.1:1"}
			cmd := NewCommandWith(registerExample, io.Discard, tt.opts)
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), "serving the metrics on "+tt.want+":") {
				t.Errorf("Execute() = %v, want an error: serving the metrics on %s: ...", err, tt.want)
			}
		})
	}
}
