package faultproxy

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// echo is a TCP server on loopback that writes back what it reads.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func start(t *testing.T) *Proxy {
	t.Helper()
	p, err := Start(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes msg and reads it back within timeout.
func roundTrip(c net.Conn, msg string, timeout time.Duration) error {
	if _, err := c.Write([]byte(msg)); err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, len(msg))
	_, err := io.ReadFull(c, buf)
	if err == nil && string(buf) != msg {
		err = errors.New("got " + string(buf))
	}
	return err
}

func TestPassStallPass(t *testing.T) {
	p := start(t)
	c := dial(t, p)
	if err := roundTrip(c, "one", 5*time.Second); err != nil {
		t.Fatalf("passing: %v", err)
	}
	p.Set(Stall)
	if err := roundTrip(c, "two", 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stalled: the round trip ended with %v, want a timeout", err)
	}
	p.Set(Pass) // what was sent during the stall is delivered now, first
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 3)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "two" {
		t.Fatalf("the stalled bytes after the stall: %q, %v", buf, err)
	}
	if err := roundTrip(c, "three", 5*time.Second); err != nil {
		t.Fatalf("passing again: %v", err)
	}
}

func TestDrop(t *testing.T) {
	p := start(t)
	c := dial(t, p)
	if err := roundTrip(c, "one", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Set(Drop)
	if err := roundTrip(c, "two", 5*time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("an open connection after the drop: %v, want it closed", err)
	}
	if err := roundTrip(dial(t, p), "three", 5*time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a new connection while dropping: %v, want it closed", err)
	}
	p.Set(Pass)
	if err := roundTrip(dial(t, p), "four", 5*time.Second); err != nil {
		t.Fatalf("a new connection after the drop: %v", err)
	}
}

func TestLatency(t *testing.T) {
	p := start(t)
	c := dial(t, p)
	p.SetLatency(200 * time.Millisecond)
	began := time.Now()
	if err := roundTrip(c, "one", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took < 200*time.Millisecond {
		t.Errorf("a round trip took %s, want at least the latency", took)
	}
	if now, peak := p.Conns(); now != 1 || peak != 1 {
		t.Errorf("connections: %d now, %d at most; want 1, 1", now, peak)
	}
}
