package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kopf-go/kopf/runtime/logging"

	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/registry"
)

// parseRun parses the run command's flags as the command does, with the
// environment that the test has set, and returns what they say.
func parseRun(t *testing.T, args []string, opts Options) (operator.Options, logging.Options, error) {
	t.Helper()
	f := runFlags{opts: opts}
	fl := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	addRunFlags(fl, &f)
	if err := fl.Parse(args); err != nil {
		return operator.Options{}, logging.Options{}, err
	}
	if err := f.complete(fl, io.Discard); err != nil {
		return operator.Options{}, logging.Options{}, err
	}
	lo, err := f.loggerOptions()
	return f.opts, lo, err
}

// runWant is what a run command line says; the zero value is the defaults.
type runWant struct {
	namespaces []string
	all        bool
	standalone bool
	priority   int
	peering    string
	format     logging.Format
	level      slog.Level
	prefix     *bool
	refKey     string
}

func (w runWant) check(t *testing.T, op operator.Options, lo logging.Options) {
	t.Helper()
	if w.format == "" {
		w.format = logging.Full
	}
	got := runWant{op.Namespaces, op.AllNamespaces, op.Standalone, op.Priority, op.PeeringName, lo.Format, lo.Level, lo.Prefix, lo.RefKey}
	if len(got.namespaces) == 0 {
		got.namespaces = nil
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("parsed %s\nwant   %s", got, w)
	}
}

func (w runWant) String() string {
	prefix := "nil"
	if w.prefix != nil {
		prefix = fmt.Sprint(*w.prefix)
	}
	return fmt.Sprintf("{namespaces:%q all:%v standalone:%v priority:%d peering:%q format:%s level:%v prefix:%s refkey:%q}",
		w.namespaces, w.all, w.standalone, w.priority, w.peering, w.format, w.level, prefix, w.refKey)
}

// TestRunFlags: the run command's flags and environment variables say what
// `kopf run`'s do, with the same names, shorthands, defaults and
// precedence (the command line over the environment).
func TestRunFlags(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want runWant
	}{
		{name: "defaults"},
		{name: "-n, repeated and comma-separated", args: []string{"-n", "a", "--namespace=b,c"}, want: runWant{namespaces: []string{"a", "b", "c"}}},
		{name: "-A", args: []string{"-A"}, want: runWant{all: true}},
		{name: "--standalone", args: []string{"--standalone"}, want: runWant{standalone: true}},
		{name: "-p", args: []string{"-p", "100"}, want: runWant{priority: 100}},
		{name: "--priority", args: []string{"--priority=-5"}, want: runWant{priority: -5}},
		{name: "--dev", args: []string{"--dev"}, want: runWant{priority: 666}},
		{name: "--dev wins over -p", args: []string{"--dev", "-p", "5"}, want: runWant{priority: 666}},
		{name: "-P", args: []string{"-P", "example"}, want: runWant{peering: "example"}},
		{name: "--peering", args: []string{"--peering", "example"}, want: runWant{peering: "example"}},
		{name: "-v", args: []string{"-v"}, want: runWant{level: slog.LevelDebug}},
		{name: "-d: client-go's request lines too", args: []string{"-d"}, want: runWant{level: debugLevel}},
		{name: "-q", args: []string{"-q"}, want: runWant{level: slog.LevelWarn}},
		{name: "-v wins over -q", args: []string{"-q", "-v"}, want: runWant{level: slog.LevelDebug}},
		{name: "--log-format plain", args: []string{"--log-format", "plain"}, want: runWant{format: logging.Plain}},
		{name: "--log-format JSON, any case", args: []string{"--log-format", "JSON"}, want: runWant{format: logging.JSON}},
		{name: "--log-refkey", args: []string{"--log-refkey", "k8s"}, want: runWant{refKey: "k8s"}},
		{name: "--log-prefix", args: []string{"--log-prefix"}, want: runWant{prefix: &yes}},
		{name: "--no-log-prefix", args: []string{"--no-log-prefix"}, want: runWant{prefix: &no}},
		{name: "the last of --log-prefix and --no-log-prefix wins", args: []string{"--log-prefix", "--no-log-prefix"}, want: runWant{prefix: &no}},
		{name: "the last of --no-log-prefix and --log-prefix wins", args: []string{"--no-log-prefix", "--log-prefix"}, want: runWant{prefix: &yes}},
		{
			name: "every variable",
			env: map[string]string{
				"KOPF_RUN_NAMESPACES": "ns1  ns2\tdev-*", "KOPF_RUN_STANDALONE": "yes", "KOPF_RUN_PRIORITY": "7",
				"KOPF_RUN_PEERING": "example", "KOPF_RUN_VERBOSE": "on", "KOPF_RUN_LOG_FORMAT": "json",
				"KOPF_RUN_LOG_REFKEY": "k8s", "KOPF_RUN_LOG_PREFIX": "1",
			},
			want: runWant{namespaces: []string{"ns1", "ns2", "dev-*"}, standalone: true, priority: 7, peering: "example",
				format: logging.JSON, level: slog.LevelDebug, prefix: &yes, refKey: "k8s"},
		},
		{name: "KOPF_RUN_CLUSTERWIDE", env: map[string]string{"KOPF_RUN_CLUSTERWIDE": "True"}, want: runWant{all: true}},
		{name: "KOPF_RUN_DEV", env: map[string]string{"KOPF_RUN_DEV": "t", "KOPF_RUN_PRIORITY": "7"}, want: runWant{priority: 666}},
		{name: "KOPF_RUN_DEBUG", env: map[string]string{"KOPF_RUN_DEBUG": "Y"}, want: runWant{level: debugLevel}},
		{name: "KOPF_RUN_QUIET", env: map[string]string{"KOPF_RUN_QUIET": "TRUE"}, want: runWant{level: slog.LevelWarn}},
		{name: "KOPF_RUN_LOG_PREFIX=false", env: map[string]string{"KOPF_RUN_LOG_PREFIX": "false"}, want: runWant{prefix: &no}},
		{name: "KOPF_RUN_PEERING_NAME, click's automatic name", env: map[string]string{"KOPF_RUN_PEERING_NAME": "auto"}, want: runWant{peering: "auto"}},
		{name: "KOPF_RUN_PEERING before KOPF_RUN_PEERING_NAME", env: map[string]string{"KOPF_RUN_PEERING": "explicit", "KOPF_RUN_PEERING_NAME": "auto"}, want: runWant{peering: "explicit"}},
		{name: "a false boolean", env: map[string]string{"KOPF_RUN_STANDALONE": "off"}, want: runWant{}},
		{name: "an empty variable is ignored", env: map[string]string{"KOPF_RUN_LOG_FORMAT": "", "KOPF_RUN_PRIORITY": ""}, want: runWant{}},
		{
			name: "the command line wins over the environment",
			args: []string{"-n", "flag-ns", "-p", "1", "-P", "flag", "--log-format", "plain", "--log-prefix"},
			env: map[string]string{"KOPF_RUN_NAMESPACES": "env-ns", "KOPF_RUN_PRIORITY": "2", "KOPF_RUN_PEERING": "env",
				"KOPF_RUN_LOG_FORMAT": "json", "KOPF_RUN_LOG_PREFIX": "no"},
			want: runWant{namespaces: []string{"flag-ns"}, priority: 1, peering: "flag", format: logging.Plain, prefix: &yes},
		},
		{name: "KOPF_RUN_NAMESPACE, legacy: added", args: []string{"-n", "a"}, env: map[string]string{"KOPF_RUN_NAMESPACE": "legacy"}, want: runWant{namespaces: []string{"a", "legacy"}}},
		{name: "KOPF_RUN_NAMESPACE alone", env: map[string]string{"KOPF_RUN_NAMESPACE": "legacy"}, want: runWant{namespaces: []string{"legacy"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			op, lo, err := parseRun(t, tt.args, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tt.want.check(t, op, lo)
		})
	}
}

// TestRunFlagsOverOptions: the options set in code are the defaults of the
// flags that say the same.
func TestRunFlagsOverOptions(t *testing.T) {
	opts := Options{Namespaces: []string{"code"}, Priority: 3, PeeringName: "code"}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want runWant
	}{
		{name: "the options", want: runWant{namespaces: []string{"code"}, priority: 3, peering: "code"}},
		{name: "the flags", args: []string{"-A", "-p", "0", "-P", "flag"}, want: runWant{all: true, priority: 0, peering: "flag"}},
		{name: "--dev", args: []string{"--dev"}, want: runWant{namespaces: []string{"code"}, priority: 666, peering: "code"}},
		{name: "the environment", env: map[string]string{"KOPF_RUN_PRIORITY": "4", "KOPF_RUN_PEERING": "env", "KOPF_RUN_NAMESPACES": "env"},
			want: runWant{namespaces: []string{"env"}, priority: 4, peering: "env"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			op, lo, err := parseRun(t, tt.args, opts)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.check(t, op, lo)
		})
	}
}

// TestRunFlagsRejected: bad values, on the command line or in the
// environment, are errors that name them.
func TestRunFlagsRejected(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{"-n and -A", []string{"-n", "a", "-A"}, nil, "either --namespace or --all-namespaces can be used, not both"},
		{"KOPF_RUN_NAMESPACE and -A", []string{"-A"}, map[string]string{"KOPF_RUN_NAMESPACE": "legacy"}, "not both"},
		{"KOPF_RUN_CLUSTERWIDE and -n", []string{"-n", "a"}, map[string]string{"KOPF_RUN_CLUSTERWIDE": "1"}, "not both"},
		{"--log-format xml", []string{"--log-format", "xml"}, nil, `unknown log format "xml"`},
		{"KOPF_RUN_LOG_FORMAT=xml", nil, map[string]string{"KOPF_RUN_LOG_FORMAT": "xml"}, `unknown log format "xml"`},
		{"-p x", []string{"-p", "x"}, nil, `invalid argument "x" for "-p, --priority"`},
		{"KOPF_RUN_PRIORITY=x", nil, map[string]string{"KOPF_RUN_PRIORITY": "x"}, `invalid value "x" of $KOPF_RUN_PRIORITY`},
		{"KOPF_RUN_STANDALONE=maybe", nil, map[string]string{"KOPF_RUN_STANDALONE": "maybe"}, `invalid value "maybe" of $KOPF_RUN_STANDALONE: not a boolean`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, _, err := parseRun(t, tt.args, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want one with %q", err, tt.wantErr)
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
		{[]string{"run", "-n", "a", "-A"}, nil, "either --namespace or --all-namespaces can be used, not both"},
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
	if got := strings.TrimSpace(out.String()); got != operator.Version() {
		t.Errorf("version prints %q, want %q", got, operator.Version())
	}
}

// TestHelpNamesTheOperator: the help and --version name the operator (its
// binary, or Options.Name), never "operator"; --version says the runtime's
// version as Kopf's "kopf, version 1.44.6" does.
func TestHelpNamesTheOperator(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"the binary's name", Options{}, filepath.Base(os.Args[0])},
		{"a name set in code", Options{Name: "kopfexample-operator"}, "kopfexample-operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := func(args ...string) string {
				t.Helper()
				var out bytes.Buffer
				cmd := NewCommandWith(nil, io.Discard, tt.opts)
				cmd.SetArgs(args)
				cmd.SetOut(&out)
				cmd.SetErr(&out)
				if err := cmd.Execute(); err != nil {
					t.Fatal(err)
				}
				return out.String()
			}
			if got, want := run("--version"), tt.want+", kopf-go version "+operator.Version()+"\n"; got != want {
				t.Errorf("--version prints %q, want %q", got, want)
			}
			if err := func() error {
				cmd := NewCommandWith(nil, io.Discard, tt.opts)
				cmd.SetArgs([]string{"-v"})
				cmd.SetOut(io.Discard)
				cmd.SetErr(io.Discard)
				return cmd.Execute()
			}(); err == nil {
				t.Errorf("-v is accepted by the root command; Kopf's --version has no shorthand")
			}
			help := run("--help")
			if !strings.Contains(help, "  "+tt.want+" [command]") || !strings.HasPrefix(help, tt.want+": ") {
				t.Errorf("the help does not name %q:\n%s", tt.want, help)
			}
			runHelp := run("run", "--help")
			if !strings.Contains(runHelp, "  "+tt.want+" run [flags]") {
				t.Errorf("run's help does not name %q:\n%s", tt.want, runHelp)
			}
			for _, flag := range []string{"-n, --namespace", "-A, --all-namespaces", "--standalone", "--dev", "-p, --priority", "-P, --peering",
				"-v, --verbose", "-d, --debug", "-q, --quiet", "--log-format", "--log-refkey", "--log-prefix", "--no-log-prefix", "--kubeconfig"} {
				if !strings.Contains(runHelp, flag) {
					t.Errorf("run's help lacks %s:\n%s", flag, runHelp)
				}
			}
			for _, text := range []string{help, runHelp} {
				if strings.Contains(text, " operator run") || strings.Contains(text, "\n  operator ") {
					t.Errorf("the help names \"operator\":\n%s", text)
				}
			}
		})
	}
}
