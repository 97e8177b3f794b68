package cli

import (
	"io"
	"net"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// -L/--liveness and --readiness parse as Kopf's -L does.
func TestHealthFlags(t *testing.T) {
	for _, tt := range []struct {
		args                []string
		liveness, readiness string
	}{
		{nil, "", ""},
		{[]string{"-L", "http://0.0.0.0:8080/healthz"}, "http://0.0.0.0:8080/healthz", ""},
		{[]string{"--liveness=http://:8080/healthz", "--readiness", "http://:8081/readyz"}, "http://:8080/healthz", "http://:8081/readyz"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			run, _, err := NewCommand(nil, io.Discard).Find([]string{"run"})
			if err != nil {
				t.Fatal(err)
			}
			if err := run.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			liveness, _ := run.Flags().GetString("liveness")
			readiness, _ := run.Flags().GetString("readiness")
			if liveness != tt.liveness || readiness != tt.readiness {
				t.Errorf("parsed -L %q --readiness %q, want %q %q", liveness, readiness, tt.liveness, tt.readiness)
			}
		})
	}
}

// An endpoint that cannot be served stops the operator at start, with an
// error that names it (the flags' and the options' alike); nothing is sent
// to the API server before.
func TestHealthEndpointErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	for _, tt := range []struct {
		name    string
		args    []string
		opts    Options
		wantErr string
	}{
		{"bad scheme", []string{"run", "-A", "-L", "https://0.0.0.0:8080/healthz"}, Options{}, `the liveness endpoint: unsupported scheme of the endpoint "https://0.0.0.0:8080/healthz"`},
		{"bad port", []string{"run", "-A", "--readiness", "http://0.0.0.0:http/readyz"}, Options{}, "the readiness endpoint: invalid"},
		{"port in use", []string{"run", "-A", "-L", "http://" + busy.Addr().String() + "/healthz"}, Options{}, "listening on " + busy.Addr().String()},
		{"port in use, in the options", []string{"run", "-A"}, Options{ReadinessEndpoint: "http://" + busy.Addr().String() + "/readyz"}, "listening on " + busy.Addr().String()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Config = cfg
			cmd := NewCommandWith(nil, io.Discard, tt.opts)
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Execute() = %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}
