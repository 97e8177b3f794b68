package cluster

import (
	"errors"
	"fmt"
	"syscall"
)

// PauseAPIServer freezes kube-apiserver with SIGSTOP: it keeps its port
// and its connections, and the kernel still accepts new ones, but nothing
// is answered (not even a TLS handshake) until ResumeAPIServer: a hung API
// server, as seen by its clients. Like StopAPIServer, it needs /proc
// (Linux).
func (c *Cluster) PauseAPIServer() error { return c.signalAPIServer(syscall.SIGSTOP) }

// ResumeAPIServer lets a kube-apiserver frozen by PauseAPIServer go on
// (SIGCONT).
func (c *Cluster) ResumeAPIServer() error { return c.signalAPIServer(syscall.SIGCONT) }

func (c *Cluster) signalAPIServer(sig syscall.Signal) error {
	s := c.Envtest().ControlPlane.APIServer
	if s == nil || s.SecureServing.Port == "" {
		return errors.New("the API server is not running")
	}
	pid, err := apiServerPID(s.SecureServing.Port)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("sending %v to kube-apiserver (pid %d): %w", sig, pid, err)
	}
	return nil
}
