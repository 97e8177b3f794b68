// Package faultproxy is a TCP proxy on loopback that the end-to-end tests
// put between one operator replica and the API server (the replica's
// kubeconfig names the proxy's address: TLS passes through it untouched,
// and the API server's certificate is valid for 127.0.0.1 either way), to
// inject the network's faults while the replica runs:
//
//   - Pass: bytes are forwarded both ways as they come;
//   - Stall: the connections stay open and nothing is forwarded either
//     way (new connections are accepted and stall too), as behind a
//     partition where packets are lost and nobody says so; what was sent
//     meanwhile is delivered when the proxy passes again, as TCP
//     retransmits it once a partition heals (so a request sent during the
//     stall can still reach the API server late: fences exist for that);
//   - Drop: every connection is closed and new ones are closed as soon as
//     they are accepted, as a network that resets them;
//   - Latency: each chunk of bytes from the replica to the API server is
//     delivered that long after the proxy read it (a delay line, order
//     kept, chunks pipelined rather than queued behind each other's
//     delays): every request is late by that much, the answers are not.
//
// It is written here rather than taken from a library: Shopify's
// toxiproxy (the usual one, usable as a Go library) has no mode that holds
// bytes and delivers them later (its timeout toxic drops them), and it
// would bring its HTTP API's and metrics' dependencies into e2e/go.mod for
// a hundred lines of net.Conn copying.
package faultproxy

import (
	"io"
	"net"
	"sync"
	"time"
)

// Mode is what the proxy does with the bytes.
type Mode int

const (
	Pass Mode = iota
	Stall
	Drop
)

func (m Mode) String() string {
	return [...]string{"pass", "stall", "drop"}[m]
}

// Proxy forwards the connections it accepts to a target address. Its
// methods are safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	changed *sync.Cond // the mode or latency changed, or the proxy closed
	mode    Mode
	latency time.Duration
	conns   map[*link]bool
	peak    int // the most connections open at once
	closed  bool
	wg      sync.WaitGroup
}

// Start listens on 127.0.0.1 (a free port) and forwards to target
// (host:port), passing through until told otherwise.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[*link]bool{}}
	p.changed = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Set switches the mode: Drop closes the connections open now.
func (p *Proxy) Set(m Mode) {
	p.mu.Lock()
	p.mode = m
	var drop []*link
	if m == Drop {
		for l := range p.conns {
			drop = append(drop, l)
		}
	}
	p.changed.Broadcast()
	p.mu.Unlock()
	for _, l := range drop {
		p.closeLink(l)
	}
}

// SetLatency delays every chunk from the client to the target by d (0:
// none), in whatever mode.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.changed.Broadcast()
	p.mu.Unlock()
}

// Conns is the number of connections open now, and the most open at once
// since the start.
func (p *Proxy) Conns() (now, peak int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns), p.peak
}

// Close stops accepting and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	conns := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		conns = append(conns, l)
	}
	p.changed.Broadcast()
	p.mu.Unlock()
	_ = p.ln.Close()
	for _, l := range conns {
		p.closeLink(l)
	}
	p.wg.Wait()
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		drop := p.mode == Drop || p.closed
		p.mu.Unlock()
		if drop {
			_ = c.Close()
			continue
		}
		p.wg.Add(1)
		go p.handle(c)
	}
}

// link is one proxied connection.
type link struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{} // closed with the link
}

// closeLink closes both ends of a link and forgets it; its pumps return.
func (p *Proxy) closeLink(l *link) {
	p.mu.Lock()
	delete(p.conns, l)
	p.changed.Broadcast()
	p.mu.Unlock()
	l.once.Do(func() {
		close(l.done)
		_ = l.client.Close()
		_ = l.server.Close()
	})
}

func (p *Proxy) handle(c net.Conn) {
	defer p.wg.Done()
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	l := &link{client: c, server: s, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed || p.mode == Drop {
		p.mu.Unlock()
		_ = c.Close()
		_ = s.Close()
		return
	}
	p.conns[l] = true
	p.peak = max(p.peak, len(p.conns))
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pump(l, s, c, true) }()
	go func() { defer wg.Done(); p.pump(l, c, s, false) }()
	wg.Wait()
}

// chunk is bytes read, and when.
type chunk struct {
	data []byte
	at   time.Time
}

// pump copies src to dst through a delay line: a reader takes chunks as
// they come, a writer forwards each once the mode lets it (and, towards
// the server, its latency has passed). Either side's end closes the link.
func (p *Proxy) pump(l *link, dst io.Writer, src io.Reader, toServer bool) {
	defer p.closeLink(l)
	chunks := make(chan chunk, 256)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				select {
				case chunks <- chunk{buf[:n], time.Now()}:
				case <-l.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for ch := range chunks {
		if !p.await(l, ch.at, toServer) {
			return
		}
		if _, err := dst.Write(ch.data); err != nil {
			return
		}
	}
}

// await waits until a chunk read at at may be forwarded: the proxy passes
// and the latency (towards the server) has passed. False: the link or the
// proxy is closing.
func (p *Proxy) await(l *link, at time.Time, toServer bool) bool {
	for {
		p.mu.Lock()
		for p.mode == Stall && !p.closed && p.conns[l] {
			p.changed.Wait()
		}
		ok := !p.closed && p.mode != Drop && p.conns[l]
		wait := time.Duration(0)
		if toServer {
			wait = time.Until(at.Add(p.latency))
		}
		p.mu.Unlock()
		if !ok {
			return false
		}
		if wait <= 0 {
			return true
		}
		time.Sleep(min(wait, 50*time.Millisecond)) // the latency or the mode may change meanwhile
	}
}
