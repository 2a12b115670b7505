package memnet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/msgr"
)

// Errors returned by dials and connection I/O.
var (
	// ErrBroken: the connection was broken by a drop, a partition or
	// Network.Close.
	ErrBroken = errors.New("memnet: connection broken")
	// ErrRefused: nothing listens at the address, or Refuse made the
	// dialling host's dials to it fail; it wraps syscall.ECONNREFUSED,
	// as a TCP dial to a port nobody listens on does
	// (msgr.ConnRefused).
	ErrRefused = fmt.Errorf("memnet: connection refused: %w", syscall.ECONNREFUSED)
	// ErrPartitioned: the two addresses are partitioned.
	ErrPartitioned = errors.New("memnet: network partitioned")
	// ErrAddrInUse: something already listens at the address.
	ErrAddrInUse = errors.New("memnet: address in use")
)

// Config configures a Network; the zero value is a perfect network.
type Config struct {
	// Seed seeds drops and delays.
	Seed uint64
	// DropRate is the probability that a Write breaks its connection.
	DropRate float64
	// MinDelay and MaxDelay bound the delay before written bytes can be
	// read.
	MinDelay, MaxDelay time.Duration
	// BufferSize is the bytes one direction of a connection holds before
	// Write blocks. Default 1 MiB.
	BufferSize int
	// Clock times delays and deadlines. Default clock.Real().
	Clock clock.Clock
}

// Network is an in-memory network of hosts named by address.
type Network struct {
	cfg Config

	mu        sync.Mutex
	rng       *rand.Rand
	dropRate  float64
	closed    bool
	listeners map[string]*listener
	conns     map[*conn]struct{} // dialing ends
	parts     map[[2]string]bool
	refusing  map[[2]string]bool
	frozen    map[string]chan struct{} // closed by Thaw
}

// New returns a Network.
func New(cfg Config) *Network {
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = 1 << 20
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.MaxDelay < cfg.MinDelay {
		cfg.MaxDelay = cfg.MinDelay
	}
	return &Network{
		cfg:       cfg,
		rng:       rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5851f42d4c957f2d)),
		dropRate:  cfg.DropRate,
		listeners: make(map[string]*listener),
		conns:     make(map[*conn]struct{}),
		parts:     make(map[[2]string]bool),
		refusing:  make(map[[2]string]bool),
		frozen:    make(map[string]chan struct{}),
	}
}

// Host returns the view of the network from addr: what it dials
// originates there (for partitions) and what it listens on should be
// addr.
func (n *Network) Host(addr string) msgr.Network { return &host{n: n, addr: addr} }

// SetDropRate changes the drop probability of later Writes.
func (n *Network) SetDropRate(p float64) {
	n.mu.Lock()
	n.dropRate = p
	n.mu.Unlock()
}

// Partition cuts a from b: their connections break and new dials between
// them fail until Heal.
func (n *Network) Partition(a, b string) {
	n.mu.Lock()
	n.parts[pairKey(a, b)] = true
	var cut []*conn
	for c := range n.conns {
		if pairKey(c.local, c.remote) == pairKey(a, b) {
			cut = append(cut, c)
		}
	}
	n.mu.Unlock()
	for _, c := range cut {
		c.breakBoth(fmt.Errorf("%w: partition %s | %s", ErrBroken, a, b))
	}
}

// Heal removes every partition and every refusing link (Refuse).
func (n *Network) Heal() {
	n.mu.Lock()
	clear(n.parts)
	clear(n.refusing)
	n.mu.Unlock()
}

// Refuse makes the link between a and b refuse, as a firewall rule that
// rejects (rather than drops) their packets does: their connections are
// reset and dials between them fail at once with ErrRefused, as if
// nothing listened, while both hosts still reach everyone else. Heal
// ends it. A dead process looks the same to each of its peers (Close of
// its listener); one refusing link is what must not pass for one.
func (n *Network) Refuse(a, b string) {
	n.mu.Lock()
	n.refusing[pairKey(a, b)] = true
	n.mu.Unlock()
	n.Break(a, b)
}

// Freeze stops the process at addr as SIGSTOP would, with its
// connections open: nothing written to or by it is delivered until Thaw
// (the bytes are held, not lost), dials to it still connect (the
// kernel accepts them) but get no answer, and nothing is refused or
// reset, so its peers see only silence and time out.
func (n *Network) Freeze(addr string) {
	n.mu.Lock()
	if n.frozen[addr] == nil {
		n.frozen[addr] = make(chan struct{})
	}
	n.mu.Unlock()
}

// Thaw resumes a frozen process (SIGCONT): what was held is delivered.
func (n *Network) Thaw(addr string) {
	n.mu.Lock()
	if ch := n.frozen[addr]; ch != nil {
		close(ch)
		delete(n.frozen, addr)
	}
	n.mu.Unlock()
}

// frozenUntil returns a channel closed when the process at a or b, if
// frozen, is thawed; nil if neither is frozen.
func (n *Network) frozenUntil(a, b string) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ch := n.frozen[a]; ch != nil {
		return ch
	}
	return n.frozen[b]
}

// Break breaks every connection between a and b without partitioning
// them.
func (n *Network) Break(a, b string) {
	n.mu.Lock()
	var cut []*conn
	for c := range n.conns {
		if pairKey(c.local, c.remote) == pairKey(a, b) {
			cut = append(cut, c)
		}
	}
	n.mu.Unlock()
	for _, c := range cut {
		c.breakBoth(fmt.Errorf("%w: broken between %s and %s", ErrBroken, a, b))
	}
}

// Close breaks every connection and closes every listener.
func (n *Network) Close() error {
	n.mu.Lock()
	n.closed = true
	lns := make([]*listener, 0, len(n.listeners))
	for _, ln := range n.listeners {
		lns = append(lns, ln)
	}
	cs := make([]*conn, 0, len(n.conns))
	for c := range n.conns {
		cs = append(cs, c)
	}
	n.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	for _, c := range cs {
		c.breakBoth(fmt.Errorf("%w: network closed", ErrBroken))
	}
	return nil
}

func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// writeFate decides, for one Write, whether it breaks the connection and
// how long its bytes take.
func (n *Network) writeFate() (drop bool, delay time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	drop = n.dropRate > 0 && n.rng.Float64() < n.dropRate
	delay = n.cfg.MinDelay
	if span := n.cfg.MaxDelay - n.cfg.MinDelay; span > 0 {
		delay += time.Duration(n.rng.Int64N(int64(span) + 1))
	}
	return drop, delay
}

func (n *Network) forget(c *conn) {
	n.mu.Lock()
	delete(n.conns, c)
	n.mu.Unlock()
}

// host is a Network as seen from one address.
type host struct {
	n    *Network
	addr string
}

// Listen listens on addr.
func (h *host) Listen(addr string) (net.Listener, error) {
	n := h.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, net.ErrClosed
	}
	if n.listeners[addr] != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, ErrAddrInUse)
	}
	ln := &listener{n: n, addr: addr, wake: make(chan struct{}, 1), done: make(chan struct{})}
	n.listeners[addr] = ln
	return ln, nil
}

// Dial connects to addr, or fails at once if nothing listens there, the
// two hosts are partitioned or their link refuses.
func (h *host) Dial(ctx context.Context, addr string) (net.Conn, error) {
	n := h.n
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	ln := n.listeners[addr]
	switch {
	case n.closed:
		return nil, net.ErrClosed
	case n.parts[pairKey(h.addr, addr)]:
		return nil, fmt.Errorf("dial %s from %s: %w", addr, h.addr, ErrPartitioned)
	case ln == nil || n.refusing[pairKey(h.addr, addr)]:
		return nil, fmt.Errorf("dial %s: %w", addr, ErrRefused)
	}
	c, s := newPair(n, h.addr, addr)
	n.conns[c] = struct{}{}
	ln.pending = append(ln.pending, s)
	select {
	case ln.wake <- struct{}{}:
	default:
	}
	return c, nil
}

// listener accepts connections dialed to its address.
type listener struct {
	n       *Network
	addr    string
	wake    chan struct{}
	done    chan struct{}
	pending []*conn // guarded by n.mu
	once    sync.Once
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		l.n.mu.Lock()
		if len(l.pending) > 0 {
			c := l.pending[0]
			l.pending = l.pending[1:]
			l.n.mu.Unlock()
			return c, nil
		}
		l.n.mu.Unlock()
		select {
		case <-l.wake:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
}

// Close stops accepting; connections not yet accepted break.
func (l *listener) Close() error {
	l.once.Do(func() {
		l.n.mu.Lock()
		if l.n.listeners[l.addr] == l {
			delete(l.n.listeners, l.addr)
		}
		pending := l.pending
		l.pending = nil
		l.n.mu.Unlock()
		close(l.done)
		for _, c := range pending {
			c.breakBoth(fmt.Errorf("%w: listener closed", ErrBroken))
		}
	})
	return nil
}

func (l *listener) Addr() net.Addr { return addr(l.addr) }

// addr is a memnet address.
type addr string

func (a addr) Network() string { return "memnet" }
func (a addr) String() string  { return string(a) }
