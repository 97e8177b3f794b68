package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/cli"
)

// peered undoes kopftest's standalone default and names each operator.
func peered(id string) []kopf.Option {
	return []kopf.Option{
		func(o *cli.Options) { o.Standalone = false },
		kopf.WithSettings(func(s *kopf.Settings) { s.Peering.Identity = id }),
	}
}

// As the example's README: operator A pauses while operator B runs with
// --dev, and resumes when B exits; then the same with `freeze` and
// `resume`.
func TestPeering(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml", "../peering.yaml"))
	manifest, err := os.ReadFile("../peering.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.Apply(t.Context(), env.Config, manifest); err != nil { // the "default" peering objects
		t.Fatal(err)
	}
	objs := kopftest.NewObjects(t, env.Config, examples.KopfExamples, "default")

	a := kopftest.StartCommand(t, env.Config, []string{"run", "-A", "--verbose"}, Register, peered("operator-a")...)
	objs.Create(map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": map[string]any{"name": "kopf-example-1"}})
	a.WaitOutcome(kopftest.Match{Name: "kopf-example-1", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)

	b := kopftest.StartCommand(t, env.Config, []string{"run", "-A", "--verbose", "--dev"}, Register, peered("operator-b")...)
	a.WaitLog("Pausing operations in favour of [<Peer operator-b: priority=666, lifetime=60, lastseen='", 30*time.Second)
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	a.WaitLog("Resuming operations after the pause. Conflicting operators with the same priority are gone.", 30*time.Second)

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	command := func(args ...string) {
		t.Helper()
		var out bytes.Buffer
		cmd := cli.NewCommand(Register, &out)
		cmd.SetArgs(append(args, "--kubeconfig", kubeconfig))
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		if err := cmd.ExecuteContext(t.Context()); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out.String())
		}
	}
	command("freeze", "-P", "default", "--lifetime", "60", "--priority", "100", "--id", "manual")
	a.WaitLog("Pausing operations in favour of [<Peer manual: priority=100, lifetime=60, lastseen='", 30*time.Second)
	command("resume", "-P", "default", "--id", "manual")
	waitCount(t, a, "Resuming operations after the pause.", 2, 30*time.Second)
}

func waitCount(t *testing.T, op *kopftest.Operator, text string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for op.CountLog(text) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%q is logged %d times, want %d:\n%s", text, op.CountLog(text), n, op.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
