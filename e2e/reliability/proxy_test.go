package reliability_test

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// freezingProxy is a TCP proxy on 127.0.0.1 that passes bytes (TLS
// included) between its clients and a target, and can freeze every
// connection it holds: from then on, bytes in either direction are read
// but neither forwarded nor answered, and nothing is closed, as with a peer
// that silently went away behind a NAT or a load balancer. Connections
// accepted after a freeze are forwarded normally.
type freezingProxy struct {
	ln       net.Listener
	target   string
	accepted atomic.Int64

	mu     sync.Mutex
	conns  map[*proxiedConn]bool
	closed bool
	wg     sync.WaitGroup
}

// maxProxiedConns bounds the connections a proxy holds at once.
const maxProxiedConns = 64

type proxiedConn struct {
	client, server net.Conn
	frozen         atomic.Bool
	once           sync.Once
	gone           chan struct{}
}

// startProxy starts a proxy to target (host:port), closed at the end of
// the test.
func startProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{ln: ln, target: target, conns: map[*proxiedConn]bool{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *freezingProxy) Addr() string { return p.ln.Addr().String() }

// Accepted counts the connections accepted so far.
func (p *freezingProxy) Accepted() int64 { return p.accepted.Load() }

// Freeze freezes every connection the proxy holds now.
func (p *freezingProxy) Freeze() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.frozen.Store(true)
	}
	return len(p.conns)
}

// Close stops accepting and closes every connection.
func (p *freezingProxy) Close() {
	p.mu.Lock()
	p.closed = true
	conns := make([]*proxiedConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	for _, c := range conns {
		c.close()
	}
	p.wg.Wait()
}

func (p *freezingProxy) serve() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		c := &proxiedConn{client: client, server: server, gone: make(chan struct{})}
		p.mu.Lock()
		if p.closed || len(p.conns) >= maxProxiedConns {
			p.mu.Unlock()
			c.close()
			continue
		}
		p.conns[c] = true
		p.wg.Add(2)
		p.mu.Unlock()
		go p.pipe(c, c.client, c.server)
		go p.pipe(c, c.server, c.client)
	}
}

// pipe forwards src to dst until either side closes, or holds everything
// back once the connection is frozen.
func (p *freezingProxy) pipe(c *proxiedConn, src, dst net.Conn) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if c.frozen.Load() {
			// Swallow whatever comes, answer nothing, close nothing.
			if err == nil {
				continue
			}
			<-c.gone
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				c.close()
				return
			}
		}
		if err != nil {
			c.close()
			return
		}
	}
}

func (c *proxiedConn) close() {
	c.once.Do(func() {
		close(c.gone)
		_ = c.client.Close()
		_ = c.server.Close()
	})
}
