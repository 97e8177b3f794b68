// Package proc runs the end-to-end tests' operators as separate processes,
// as they are deployed: it builds a main package of the e2e module into a
// binary, starts it with its output in a log file, and kills or stops it.
//
// A started process never outlives the test: it dies with the test binary
// (Pdeathsig), and the test's cleanup kills it if it still runs; when the
// test has failed, the cleanup logs the tail of the process's log.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// LogTail is how many bytes of a process's log a failed test shows (the
// last ones, from the start of a line).
const LogTail = 20000

// Options are how to start a process.
type Options struct {
	// Name names the process in the test's messages; the base name of Log
	// if empty.
	Name string
	// Log is the file that receives the process's stdout and stderr; it is
	// created (or truncated).
	Log string
	// Env is the process's whole environment; the test's own
	// (os.Environ()) if nil.
	Env []string
	// Args are the process's arguments, after the binary.
	Args []string
}

// Process is a binary started by Start. Its methods are safe for
// concurrent use; those that fail the test at once (Kill, WaitLog) must be
// called from the test's goroutine, as testing.T.Fatal must.
type Process struct {
	// Name names the process in messages (Options.Name).
	Name string
	// Log is the path of the process's log (Options.Log).
	Log string

	cmd    *exec.Cmd
	done   chan struct{}
	exited time.Time // set before done is closed
}

// Start starts bin as o says, and fails the test if it cannot. The test's
// cleanup kills the process if it still runs, and logs the last LogTail
// bytes of its log if the test has failed.
func Start(t testing.TB, bin string, o Options) *Process {
	t.Helper()
	if o.Name == "" {
		o.Name = filepath.Base(o.Log)
	}
	logFile, err := os.Create(o.Log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, o.Args...)
	cmd.Env = o.Env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("starting %s (%s): %v", o.Name, bin, err)
	}
	p := &Process{Name: o.Name, Log: o.Log, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		p.exited = time.Now()
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
			data, _ := os.ReadFile(o.Log)
			t.Logf("log of %s (pid %d):\n%s", p.Name, cmd.Process.Pid, Tail(data, LogTail))
		}
	})
	return p
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits up to timeout for the process to exit, and reports whether it
// did.
func (p *Process) Wait(timeout time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Exited is when the process was seen to exit; valid once Done is closed.
func (p *Process) Exited() time.Time {
	<-p.done
	return p.exited
}

// ExitCode is the process's exit code, -1 if a signal ended it; it waits
// for the exit.
func (p *Process) ExitCode() int {
	<-p.done
	return p.cmd.ProcessState.ExitCode()
}

// Logs is the process's log so far.
func (p *Process) Logs() string {
	data, _ := os.ReadFile(p.Log)
	return string(data)
}

// WaitLog waits up to timeout for text in the process's log, polling it,
// and returns when it saw it; the test fails at once if it does not.
func (p *Process) WaitLog(t testing.TB, text string, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.Logs(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %q in the log of %s", timeout, text, p.Name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Now()
}

// Kill sends SIGKILL and waits for the process to be gone; the test fails
// at once if it is not in 10 s.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("killing %s: %v", p.Name, err)
	}
	if !p.Wait(10 * time.Second) {
		t.Fatalf("%s did not die in 10 s after SIGKILL", p.Name)
	}
}

// Stop sends SIGTERM and waits up to timeout for a clean exit; the test
// fails (and goes on) if the process does not exit in time or exits with
// a code other than 0.
func (p *Process) Stop(t testing.TB, timeout time.Duration) {
	t.Helper()
	_ = p.Signal(syscall.SIGTERM)
	if !p.Wait(timeout) {
		t.Errorf("%s did not exit in %s after SIGTERM", p.Name, timeout)
		return
	}
	if code := p.ExitCode(); code != 0 {
		t.Errorf("%s exited with %d after SIGTERM", p.Name, code)
	}
}

// Tail is the last n bytes of data or a little less, from the start of a
// line, with a note of how much was cut; data whole if it is n bytes or
// fewer.
func Tail(data []byte, n int) string {
	if len(data) <= n {
		return string(data)
	}
	cut := data[len(data)-n:]
	if i := bytes.IndexByte(cut, '\n'); i >= 0 {
		cut = cut[i+1:]
	}
	return fmt.Sprintf("...(%d bytes cut)\n%s", len(data)-len(cut), cut)
}

// Build builds the main package pkg (a path such as ./internal/slowop,
// relative to the test's package directory) into dir, and returns the
// binary's path: dir and the package's base name. It fails the test if
// the build fails.
func Build(t testing.TB, pkg, dir string) string {
	t.Helper()
	bin, err := build(pkg, dir)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func build(pkg, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	if out, err := exec.Command(goBin, "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// Binary is a main package built at most once per test binary, on the
// first call of Path, into a temporary directory of its own; TestMain
// calls Remove after the tests. The zero value with Pkg set is ready.
type Binary struct {
	// Pkg is the package, as for Build.
	Pkg string

	once sync.Once
	dir  string
	path string
	err  error
}

// Path is the built binary's path; it builds the package on the first
// call, and fails the test if that build failed.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "e2e-"+filepath.Base(b.Pkg)+"-")
		if b.err == nil {
			b.path, b.err = build(b.Pkg, b.dir)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Remove deletes the binary's directory, if it was built.
func (b *Binary) Remove() error {
	if b.dir == "" {
		return nil
	}
	return os.RemoveAll(b.dir)
}
