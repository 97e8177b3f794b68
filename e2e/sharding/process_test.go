package sharding_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildOperator builds internal/shardop into dir.
func buildOperator(t *testing.T, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(dir, "shardop")
	out, err := exec.Command(goBin, "build", "-o", bin, "./internal/shardop").CombinedOutput()
	if err != nil {
		t.Fatalf("building the operator: %v\n%s", err, out)
	}
	return bin
}

// process is an operator replica running as a separate process.
type process struct {
	identity string
	cmd      *exec.Cmd
	log      string
	done     chan struct{}
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func startReplica(t *testing.T, bin, kubeconfig, record, dir, identity string, extra ...string) *process {
	t.Helper()
	logPath := filepath.Join(dir, identity+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "-A", "--shards=64", "-v", "--kubeconfig", kubeconfig}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SHARDOP_RECORD="+record, "SHARDOP_IDENTITY="+identity)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("starting the operator: %v", err)
	}
	p := &process{identity: identity, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("log of replica %s (pid %d):\n%s", identity, cmd.Process.Pid, tail(data, 6000))
		}
	})
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *process) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("killing the operator: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the operator did not die in 10 s after SIGKILL")
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("replica %s exited with %d after SIGTERM", p.identity, code)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("replica %s did not exit in 30 s after SIGTERM", p.identity)
	}
}

func tail(data []byte, n int) string {
	if len(data) <= n {
		return string(data)
	}
	cut := data[len(data)-n:]
	if i := bytes.IndexByte(cut, '\n'); i >= 0 {
		cut = cut[i+1:]
	}
	return fmt.Sprintf("...(%d bytes cut)\n%s", len(data)-len(cut), cut)
}

// run is one line of the record: a handler's invocation or its end.
type run struct {
	event, handler, object, wave string
	pid, retry                   int
	at                           time.Time
}

// audit is the record of every handler run of every replica.
type audit struct{ runs []run }

func readAudit(t *testing.T, path string) audit {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var a audit
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 7 {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimPrefix(f[4], "pid="))
		ns, _ := strconv.ParseInt(strings.TrimPrefix(f[5], "t="), 10, 64)
		retry, _ := strconv.Atoi(strings.TrimPrefix(f[6], "retry="))
		a.runs = append(a.runs, run{event: f[0], handler: f[1], object: f[2], wave: strings.TrimPrefix(f[3], "wave="), pid: pid, retry: retry, at: time.Unix(0, ns)})
	}
	return a
}

// change is one handler's runs for one object and one wave.
type change struct{ invoked, finished []run }

// changes groups the runs of a handler in a wave by object.
func (a audit) changes(handler, wave string) map[string]*change {
	out := map[string]*change{}
	for _, r := range a.runs {
		if r.handler != handler || r.wave != wave {
			continue
		}
		c := out[r.object]
		if c == nil {
			c = &change{}
			out[r.object] = c
		}
		if r.event == "invoked" {
			c.invoked = append(c.invoked, r)
		} else {
			c.finished = append(c.finished, r)
		}
	}
	return out
}
