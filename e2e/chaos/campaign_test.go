package chaos

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// ciFlags are the small campaign that `make test` runs (docs/chaos.md):
// `make chaos CHAOS_FLAGS="<these>"` repeats its schedule.
var ciFlags = []string{
	"-seed", "20261127", "-n", "160", "-plain", "40",
	"-kills", "10", "-restarts", "2", "-pauses", "1", "-max-up", "5s",
}

// TestCampaign builds the chaos campaign (e2e/cmd/chaos) and its operator
// and runs a small campaign with a fixed seed: 200 objects, 10 SIGKILLs of
// the operator, 2 restarts of kube-apiserver and a pause of it longer than
// the operator's watch inactivity timeout. The campaign's own checks decide
// (exit code 0: every object fully handled, no re-run outside the crash
// window, no crash in an operator's log, the pause outlasted a watch); the
// test also checks, from its summary, that every fault was injected. The
// campaign's files are kept, and named, when the test fails.
func TestCampaign(t *testing.T) {
	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-time.Minute)) // time to stop the control plane
		t.Cleanup(cancel)
	}
	bin := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator),
		"github.com/kopf-go/kopf/e2e/cmd/chaos", "github.com/kopf-go/kopf/e2e/cmd/chaos/operator")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the campaign: %v\n%s", err, out)
	}
	work, err := os.MkdirTemp("", "kopf-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the campaign's files (ledger, audit log, operators' logs, reruns.txt) are kept in %s", work)
			return
		}
		os.RemoveAll(work)
	})
	t.Logf("chaos campaign %s (repeat: make chaos CHAOS_FLAGS=%q)", strings.Join(ciFlags, " "), strings.Join(ciFlags, " "))
	args := append([]string{"-operator", filepath.Join(bin, "operator"), "-work", work}, ciFlags...)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "chaos"), args...)
	cmd.Stdout = &lineLogger{t: t}
	cmd.Stderr = cmd.Stdout
	// On the deadline, SIGINT: the campaign stops its operator and control plane.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	began := time.Now()
	err = cmd.Run()
	t.Logf("the campaign took %s", time.Since(began).Round(time.Second))
	if err != nil {
		t.Errorf("the campaign failed (exit code 1: a check failed; 2: it could not run): %v", err)
	}
	summary, err := os.ReadFile(filepath.Join(work, "summary.txt"))
	if err != nil {
		t.Fatalf("no summary: %v", err)
	}
	for _, want := range []string{
		`(?m)^seed +20261127$`,
		`(?m)^objects +160 KopfExample .* \+ 40 KopfPlain`,
		`(?m)^operator SIGKILLs +10 `,
		`(?m)^kube-apiserver restarts +2$`,
		`(?m)^kube-apiserver pauses .* +1, `,
		`(?m)^objects not fully handled +0$`,
		`(?m)^ +outside the window \(bugs\) +0 +0$`,
		`(?m)^PASS: `,
	} {
		if !regexp.MustCompile(want).Match(summary) {
			t.Errorf("the summary does not match %s", want)
		}
	}
}

// lineLogger writes each complete line to the test's log.
type lineLogger struct {
	t   *testing.T
	buf []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.t.Log(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}
