package peering

import (
	"os/exec"
	"testing"
	"time"

	"github.com/kopf-go/kopf/kopftest"
)

// The freeze and resume commands of the operator binary (Kopf's `kopf
// freeze` and `kopf resume`) pause and resume a running operator.
func TestFreezeResume(t *testing.T) {
	ns := newNamespace(t, "freeze")
	newPeering(t, ns, "frozen")
	objs := kopftest.NewObjects(t, shared.Config, examples, ns)
	op := kopftest.Start(t, shared.Config, register(nil), peered(ns, "frozen", 0, "kopf-go-freeze")...)
	bin, kc := binary(t), kubeconfig(t)
	waitFor(t, "the operator's record", 30*time.Second, func() bool { return rawRecord(t, ns, "frozen", "kopf-go-freeze") != "" })

	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--kubeconfig", kc)...)
		cmd.Env = cleanEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run("freeze", "-P", "frozen", "-n", ns, "--lifetime", "60", "--priority", "100", "--id", "manual", "--message", "maintenance")
	op.WaitLog("Pausing operations in favour of [<Peer manual: priority=100, lifetime=60, lastseen='", 30*time.Second)
	if rec := rawRecord(t, ns, "frozen", "manual"); rec == "" {
		t.Fatal("freeze wrote no record")
	}
	objs.Create(example("obj-1"))
	op.WaitLog("["+ns+"/obj-1] The operator is paused: the processing waits for the resume.", 30*time.Second)
	if got := op.Outcomes(kopftest.Match{Name: "obj-1", Handler: "create_fn"}); len(got) != 0 {
		t.Fatalf("the frozen operator handled obj-1: %v", got)
	}

	resumed := time.Now()
	run("resume", "-P", "frozen", "-n", ns, "--id", "manual")
	op.WaitLog("Resuming operations after the pause. Conflicting operators with the same priority are gone.", 30*time.Second)
	if o := op.WaitOutcome(kopftest.Match{Name: "obj-1", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second); o.Time.Before(resumed) {
		t.Errorf("obj-1 was handled at %s, before the resume at %s", o.Time, resumed)
	}
	if rec := rawRecord(t, ns, "frozen", "manual"); rec != "" {
		t.Errorf("resume left the record: %s", rec)
	}

	// Mandatory options and a missing peering are errors.
	for _, args := range [][]string{
		{"freeze", "-n", ns, "--lifetime", "60"},                  // no -P
		{"freeze", "-P", "frozen", "-n", ns},                      // no --lifetime
		{"resume", "-P", "no-such-peering", "-n", ns, "-i", "me"}, // no object
	} {
		cmd := exec.Command(bin, append(args, "--kubeconfig", kc)...)
		cmd.Env = cleanEnv()
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("%v succeeded:\n%s", args, out)
		}
	}
}
