package cluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// StopAPIServer kills kube-apiserver and leaves etcd running, so that every
// object survives until StartAPIServer starts it again. Clients see their
// connections reset, then refused.
//
// The server is killed (SIGKILL, as in a crash or a forced restart) rather
// than stopped: on SIGTERM, kube-apiserver drains open watch streams for up
// to a minute, so with an operator connected a graceful stop takes longer
// than envtest waits. It finds the process by its parent (this process)
// and its --secure-port, so it needs /proc (Linux).
//
// envtest's APIServer can be started again on the same port, but it deletes
// its certificate directory on Stop and would generate a new serving CA on
// Start, which existing clients (Config, kubeconfigs, running operators)
// would then reject. So the directory's files are kept here and restored by
// StartAPIServer: the server comes back on the same address with the same
// certificates, and clients reconnect as to a restarted kube-apiserver.
func (c *Cluster) StopAPIServer() error {
	s := c.Envtest().ControlPlane.APIServer
	if s == nil || s.CertDir == "" {
		return errors.New("the API server is not running")
	}
	entries, err := os.ReadDir(s.CertDir)
	if err != nil {
		return fmt.Errorf("reading the API server's certificates: %w", err)
	}
	certs := map[string][]byte{}
	for _, e := range entries {
		if e.Type().IsRegular() {
			data, err := os.ReadFile(filepath.Join(s.CertDir, e.Name()))
			if err != nil {
				return fmt.Errorf("reading the API server's certificates: %w", err)
			}
			certs[e.Name()] = data
		}
	}
	pid, err := apiServerPID(s.SecureServing.Port)
	if err != nil {
		return err
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if err := proc.Kill(); err != nil {
		return fmt.Errorf("killing kube-apiserver (pid %d): %w", pid, err)
	}
	c.certs = certs
	// Let envtest notice the exit (it then removes the directory).
	deadline := time.Now().Add(10 * time.Second)
	for err = s.Stop(); err != nil; err = s.Stop() {
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver (pid %d) does not exit: %w", pid, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		conn, err := net.DialTimeout("tcp", s.SecureServing.HostPort(), time.Second)
		if err != nil {
			return nil
		}
		conn.Close()
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver (pid %d) still listens on %s", pid, s.SecureServing.HostPort())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// StartAPIServer starts the kube-apiserver stopped by StopAPIServer again,
// on the same address with the same certificates, and waits until it is
// healthy.
func (c *Cluster) StartAPIServer() error {
	s := c.Envtest().ControlPlane.APIServer
	if c.certs == nil {
		return errors.New("the API server was not stopped with StopAPIServer")
	}
	dir, err := os.MkdirTemp("", "kopf-apiserver-")
	if err != nil {
		return err
	}
	c.dirs = append(c.dirs, dir) // removed by Stop: envtest does not own it
	for name, data := range c.certs {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("restoring the API server's certificates: %w", err)
		}
	}
	c.certs = nil
	// With the serving certificate present, envtest keeps it (and the CA it
	// handed out) instead of generating new ones.
	s.CertDir = dir
	return s.Start()
}

// apiServerPID finds this process's kube-apiserver child serving on port.
func apiServerPID(port string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("finding kube-apiserver: %w", err)
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...", where comm may hold anything.
		open, end := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(stat[end+1:]))
		if string(stat[open+1:end]) != "kube-apiserver" || len(fields) < 2 || fields[1] != strconv.Itoa(self) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		for _, arg := range strings.Split(string(cmdline), "\x00") {
			if arg == "--secure-port="+port {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no kube-apiserver child of this process serves on port %s", port)
}
