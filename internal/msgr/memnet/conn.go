package memnet

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// chunk is the bytes of one Write, readable from at.
type chunk struct {
	data []byte
	at   time.Time
}

// pipe is one direction of a connection.
type pipe struct {
	mu       sync.Mutex
	chunks   []chunk
	size     int       // bytes held
	last     time.Time // readiness time of the newest chunk, to keep order
	eof      bool      // the writer closed: EOF once drained
	rclosed  bool      // the reader closed: writes fail
	broken   error     // both ends fail with this, held bytes are lost
	changed  chan struct{}
	deadline [2]time.Time // read, write
}

// signalLocked wakes everyone waiting on the pipe.
func (p *pipe) signalLocked() {
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
}

func (p *pipe) waitChanLocked() chan struct{} {
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.changed
}

// conn is one end of an in-memory connection.
type conn struct {
	n             *Network
	local, remote string
	r, w          *pipe
	peer          *conn
	closeOnce     sync.Once
}

func newPair(n *Network, dialer, listener string) (*conn, *conn) {
	a, b := &pipe{}, &pipe{}
	c := &conn{n: n, local: dialer, remote: listener, r: a, w: b}
	s := &conn{n: n, local: listener, remote: dialer, r: b, w: a}
	c.peer, s.peer = s, c
	return c, s
}

var errDeadline = os.ErrDeadlineExceeded

// wait blocks until ch or also (nil: none) closes, the deadline passes,
// or a chunk becomes ready at readyAt (zero: none pending). It reports a
// passed deadline.
func (c *conn) wait(ch, also <-chan struct{}, deadline, readyAt time.Time) bool {
	clk := c.n.cfg.Clock
	now := clk.Now()
	if !deadline.IsZero() && !now.Before(deadline) {
		return true
	}
	var d time.Duration = -1
	if !readyAt.IsZero() {
		d = readyAt.Sub(now)
	}
	if !deadline.IsZero() && (d < 0 || deadline.Sub(now) < d) {
		d = deadline.Sub(now)
	}
	if d < 0 {
		select {
		case <-ch:
		case <-also:
		}
		return false
	}
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-also:
	case <-t.C():
	}
	return false
}

// Read reads what is readable, waiting for delayed bytes, and for a
// frozen end (Network.Freeze) to thaw.
func (c *conn) Read(b []byte) (int, error) {
	p := c.r
	for {
		p.mu.Lock()
		switch {
		case p.broken != nil:
			err := p.broken
			p.mu.Unlock()
			return 0, err
		case p.rclosed:
			p.mu.Unlock()
			return 0, net.ErrClosed
		}
		if thawed := c.n.frozenUntil(c.local, c.remote); thawed != nil {
			ch, dl := p.waitChanLocked(), p.deadline[0] // a break or Close wakes it too
			p.mu.Unlock()
			if c.wait(ch, thawed, dl, time.Time{}) {
				return 0, errDeadline
			}
			continue
		}
		now := c.n.cfg.Clock.Now()
		if len(p.chunks) > 0 && !p.chunks[0].at.After(now) {
			n := p.readLocked(b, now)
			p.mu.Unlock()
			return n, nil
		}
		if len(p.chunks) == 0 && p.eof {
			p.mu.Unlock()
			return 0, io.EOF
		}
		var readyAt time.Time
		if len(p.chunks) > 0 {
			readyAt = p.chunks[0].at
		}
		ch, dl := p.waitChanLocked(), p.deadline[0]
		p.mu.Unlock()
		if c.wait(ch, nil, dl, readyAt) {
			return 0, errDeadline
		}
	}
}

// readLocked copies ready chunks into b.
func (p *pipe) readLocked(b []byte, now time.Time) int {
	n := 0
	for n < len(b) && len(p.chunks) > 0 && !p.chunks[0].at.After(now) {
		ch := &p.chunks[0]
		k := copy(b[n:], ch.data)
		n += k
		ch.data = ch.data[k:]
		if len(ch.data) == 0 {
			p.chunks[0] = chunk{}
			p.chunks = p.chunks[1:]
		}
	}
	p.size -= n
	p.signalLocked()
	return n
}

// Write queues b for the peer, blocking while the pipe is full. A drop
// decided for this Write breaks the connection instead.
func (c *conn) Write(b []byte) (int, error) {
	drop, delay := c.n.writeFate()
	if drop {
		c.breakBoth(ErrBroken)
		return 0, ErrBroken
	}
	p := c.w
	written := 0
	for written < len(b) {
		p.mu.Lock()
		switch {
		case p.broken != nil:
			err := p.broken
			p.mu.Unlock()
			return written, err
		case p.eof:
			p.mu.Unlock()
			return written, net.ErrClosed
		case p.rclosed:
			p.mu.Unlock()
			return written, errors.New("memnet: connection reset by peer")
		}
		if room := c.n.cfg.BufferSize - p.size; room > 0 {
			k := min(room, len(b)-written)
			at := c.n.cfg.Clock.Now().Add(delay)
			if at.Before(p.last) {
				at = p.last
			}
			p.last = at
			p.chunks = append(p.chunks, chunk{data: append([]byte(nil), b[written:written+k]...), at: at})
			p.size += k
			written += k
			p.signalLocked()
			p.mu.Unlock()
			continue
		}
		ch, dl := p.waitChanLocked(), p.deadline[1]
		p.mu.Unlock()
		if c.wait(ch, nil, dl, time.Time{}) {
			return written, errDeadline
		}
	}
	return written, nil
}

// Close closes this end: the peer reads what was written, then EOF; its
// writes fail.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.w.mu.Lock()
		c.w.eof = true
		c.w.signalLocked()
		c.w.mu.Unlock()
		c.r.mu.Lock()
		c.r.rclosed = true
		c.r.chunks, c.r.size = nil, 0
		c.r.signalLocked()
		c.r.mu.Unlock()
		c.n.forget(c)
		c.n.forget(c.peer)
	})
	return nil
}

// breakBoth fails both ends with err and discards what is in flight.
func (c *conn) breakBoth(err error) {
	for _, p := range []*pipe{c.r, c.w} {
		p.mu.Lock()
		if p.broken == nil {
			p.broken = err
		}
		p.chunks, p.size = nil, 0
		p.signalLocked()
		p.mu.Unlock()
	}
	c.n.forget(c)
	c.n.forget(c.peer)
}

func (c *conn) LocalAddr() net.Addr  { return addr(c.local) }
func (c *conn) RemoteAddr() net.Addr { return addr(c.remote) }

func (c *conn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *conn) SetReadDeadline(t time.Time) error  { return c.setDeadline(c.r, 0, t) }
func (c *conn) SetWriteDeadline(t time.Time) error { return c.setDeadline(c.w, 1, t) }

func (c *conn) setDeadline(p *pipe, i int, t time.Time) error {
	p.mu.Lock()
	p.deadline[i] = t
	p.signalLocked()
	p.mu.Unlock()
	return nil
}
