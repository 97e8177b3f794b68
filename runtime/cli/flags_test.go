package cli

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/registry"
)

// TestRunFlags: the run command's flags parse as `kopf run`'s do.
func TestRunFlags(t *testing.T) {
	for _, tt := range []struct {
		args       []string
		namespaces []string
		all, debug bool
		format     string
	}{
		{nil, []string{}, false, false, "full"},
		{[]string{"-n", "a", "--namespace=b,c"}, []string{"a", "b", "c"}, false, false, "full"},
		{[]string{"-A", "-d", "--log-format", "json"}, []string{}, true, true, "json"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			run, _, err := NewCommand(nil, io.Discard).Find([]string{"run"})
			if err != nil {
				t.Fatal(err)
			}
			if err := run.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			fl := run.Flags()
			namespaces, _ := fl.GetStringSlice("namespace")
			all, _ := fl.GetBool("all-namespaces")
			debug, _ := fl.GetBool("debug")
			format, _ := fl.GetString("log-format")
			if !reflect.DeepEqual(namespaces, tt.namespaces) || all != tt.all || debug != tt.debug || format != tt.format {
				t.Errorf("parsed -n %v -A %v -d %v --log-format %q; want %v %v %v %q",
					namespaces, all, debug, format, tt.namespaces, tt.all, tt.debug, tt.format)
			}
		})
	}
}

// TestRunRejects: invalid command lines fail before the operator starts.
func TestRunRejects(t *testing.T) {
	failing := func(*registry.Registry) error { return errors.New("bad marker") }
	for _, tt := range []struct {
		args     []string
		register RegisterFunc
		wantErr  string
	}{
		{[]string{"run", "-n", "a", "-A"}, nil, "-n/--namespace and -A/--all-namespaces are mutually exclusive"},
		{[]string{"run", "--log-format", "xml"}, nil, "xml"},
		{[]string{"run", "extra"}, nil, `unknown command "extra"`},
		{[]string{"run", "--no-such-flag"}, nil, "unknown flag: --no-such-flag"},
		{[]string{"run"}, failing, "registering the handlers: bad marker"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := NewCommand(tt.register, io.Discard)
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

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	cmd := NewCommand(nil, io.Discard)
	cmd.SetArgs([]string{"version"})
	cmd.SetOut(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != operator.Version {
		t.Errorf("version prints %q, want %q", got, operator.Version)
	}
}
