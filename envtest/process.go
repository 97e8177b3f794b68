package envtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is a running binary of WithControllers, its output in a log
// file.
type process struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	err  error         // why it exited, once done is closed
}

// startProcess starts path with args, its standard output and error into
// the file log. On Linux it receives SIGTERM when this process's thread
// that started it dies (see sysProcAttr), as the binaries that kopf-gen
// builds also arrange for themselves.
func startProcess(path string, args []string, log string) (*process, error) {
	out, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	p := &process{name: filepath.Base(path), log: log, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits for the exit, then kills it after timeout.
func (p *process) stop(timeout time.Duration) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
