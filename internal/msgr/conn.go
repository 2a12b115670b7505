package msgr

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
)

// errReplaced ends a connection whose session moved to a newer one.
var errReplaced = errors.New("msgr: connection replaced by a newer one")

// Writer and reader tuning.
const (
	readBufSize  = 64 << 10 // bufio.Reader size; larger payloads bypass it
	smallPayload = 16 << 10 // payloads up to this are copied into the batch
	maxBatch     = 256      // frames per write
)

// When a lossless session acknowledges what it received. An ack rides on
// the next outgoing message when there is one; a bare ack frame costs a
// write and a read, so it waits ackDelay for such a message, unless
// ackMessages or ackBytes are unacknowledged, which would hold up the
// peer's send budget (Config.SendMessages, SendBytes) or its memory.
const (
	ackDelay    = 2 * time.Millisecond
	ackMessages = 256
	ackBytes    = 1 << 20
)

// conn is one connection: a handshake, then a reader (the serving
// goroutine) and a writer goroutine, until the first fault.
type conn struct {
	m    *Messenger
	nc   net.Conn
	raw  *rawSocket // nc's raw reads and writes, if it is a kernel socket
	fr   frameReader
	wsig *signer // signs frames written, once the handshake set a key
	log  *slog.Logger
	s    *Session      // set by the handshake
	wake chan struct{} // wakes the writer
	done chan struct{} // closed by fault

	// Delayed acks (lossless sessions): the reader arms ackTimer once
	// per delay (ackArmed) or, past the thresholds, sets ackNow and
	// wakes the writer.
	ackTimer clock.Timer
	ackArmed atomic.Bool
	ackNow   atomic.Bool

	once sync.Once
	err  error // the first fault; read after done is closed
}

func newConn(m *Messenger, nc net.Conn) *conn {
	raw := newRawSocket(nc)
	var r io.Reader = nc
	if raw != nil {
		r = raw
	}
	return &conn{
		m:    m,
		nc:   nc,
		raw:  raw,
		fr:   frameReader{r: bufio.NewReaderSize(r, readBufSize), max: maxHandshakeFrame},
		log:  m.log.With("remote", nc.RemoteAddr().String()),
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
	}
}

// newAckTimer returns a stopped timer on the messenger's clock.
func newAckTimer(clk clock.Clock) clock.Timer {
	t := clk.NewTimer(time.Hour)
	t.Stop()
	return t
}

// fault closes the connection for err; the first reason wins and is
// logged.
func (c *conn) fault(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.done)
		c.nc.Close()
		switch {
		case errors.Is(err, ErrClosed), errors.Is(err, errReplaced), errors.Is(err, io.EOF),
			errors.Is(err, ErrSessionClosed):
			c.log.Debug("msgr: connection closed", "reason", err)
		default:
			c.log.Warn("msgr: connection closed", "reason", err)
		}
	})
}

// errOr returns the fault that closed c if there is one, else err: an I/O
// error caused by fault is reported as the fault.
func (c *conn) errOr(err error) error {
	select {
	case <-c.done:
		return c.err
	default:
		return err
	}
}

// kick wakes the writer.
func (c *conn) kick() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// serve runs an attached connection until it faults and returns the
// fault.
func (c *conn) serve() error {
	c.ackTimer = newAckTimer(c.m.cfg.Clock)
	defer c.ackTimer.Stop()
	var wg sync.WaitGroup
	wg.Go(c.writeLoop)
	c.kick() // send what queued before the connection was up
	err := c.readLoop()
	c.fault(err)
	wg.Wait()
	return c.err
}

func (c *conn) readLoop() error {
	c.fr.max = c.m.cfg.MaxFrame
	c.fr.alloc = c.m.bufs.get
	for {
		f, err := c.fr.read()
		if err != nil {
			return c.errOr(err)
		}
		switch f.kind {
		case kindMsg:
			err = c.s.receive(c, &f)
		case kindAck:
			err = c.s.acked(c, f.ack)
		default:
			err = fmt.Errorf("%w: %s frame after the handshake", ErrProtocol, kindName(f.kind))
		}
		if err != nil {
			return c.errOr(err)
		}
		if c.fr.r.Buffered() == 0 {
			c.scheduleAck() // once the burst is read
		}
	}
}

// scheduleAck arranges for the peer to learn what arrived: at once when
// much is unacknowledged, else within ackDelay unless an outgoing message
// carries the ack first. Lossy sessions send no acks: nothing is
// retransmitted on them, so a sender forgets a message once written.
func (c *conn) scheduleAck() {
	if c.s.policy == Lossy {
		return
	}
	msgs, bytes := c.s.unacked()
	switch {
	case msgs == 0:
	case msgs >= ackMessages || bytes >= ackBytes:
		c.ackSoon()
	case c.ackArmed.CompareAndSwap(false, true):
		c.ackTimer.Reset(ackDelay)
	}
}

// ackSoon makes the writer acknowledge what arrived without waiting.
func (c *conn) ackSoon() {
	c.ackNow.Store(true)
	c.kick()
}

// piece is a slice of the batch buffer or, for large payloads, the
// payload itself.
type piece struct {
	start, end int
	ext        []byte
}

// writeLoop writes queued messages and acks, coalescing what is queued
// into one writev: small frames are copied into one buffer, large payloads
// are written from the caller's slice.
func (c *conn) writeLoop() {
	var (
		buf    = make([]outMsg, maxBatch)
		out    []byte
		pieces []piece
		bufs   net.Buffers
		dones  []func()
		yield  sendYield
	)
	for {
		select {
		case <-c.wake:
			if yield.should() {
				before := c.s.unsent()
				runtime.Gosched()
				yield.record(c.s.unsent() > before)
			}
		case <-c.ackTimer.C():
			c.ackArmed.Store(false)
			c.ackNow.Store(true)
		case <-c.done:
			return
		}
		for {
			batch, ack, needAck, ok := c.s.takeBatch(c, buf, c.ackNow.Swap(false))
			if !ok {
				c.fault(errReplaced)
				return
			}
			if len(batch) == 0 && !needAck {
				break
			}
			out, pieces = c.encodeBatch(out[:0], pieces[:0], batch, ack)
			var written int64 // lossy only: the budget to free once written
			dones = dones[:0] // lossy only: whom to tell once written
			if c.s.policy == Lossy {
				for i := range batch {
					written += int64(batch[i].msg.Len())
					if batch[i].msg.Done != nil {
						dones = append(dones, batch[i].msg.Done)
					}
				}
			}
			n := len(batch)
			clear(batch)
			bufs = bufs[:0]
			for _, p := range pieces {
				if p.ext != nil {
					bufs = append(bufs, p.ext)
				} else if p.end > p.start {
					bufs = append(bufs, out[p.start:p.end])
				}
			}
			clear(pieces)
			err := c.writev(bufs)
			if c.s.policy == Lossy {
				c.s.send.release(written, int64(n)) // takeBatch forgot them
				for _, f := range dones {
					f()
				}
				clear(dones)
			}
			if err != nil {
				c.fault(c.errOr(err))
				return
			}
		}
	}
}

// writev writes bufs whole. Every write goes through it, so that the
// race detector sees one kind of write for each kind of read (rawio's
// ReleaseIO and AcquireIO).
func (c *conn) writev(bufs net.Buffers) error {
	if c.raw != nil {
		return c.raw.writev(bufs)
	}
	_, err := bufs.WriteTo(c.nc)
	return err
}

// encodeBatch lays out the frames of batch (or an ack frame if it is
// empty) into out and pieces.
func (c *conn) encodeBatch(out []byte, pieces []piece, batch []outMsg, ack uint64) ([]byte, []piece) {
	if len(batch) == 0 {
		h := header{kind: kindAck, ack: ack}
		out = appendFrame(out, &h, nil, c.wsig)
		return out, append(pieces, piece{0, len(out), nil})
	}
	mark := 0
	for i := range batch {
		om := &batch[i]
		h := header{kind: kindMsg, typ: om.msg.Type, version: om.msg.Version, seq: om.seq, ack: ack}
		size := om.msg.Len()
		if size <= smallPayload {
			out = appendFrameCRC(out, &h, om.crc, c.wsig, om.msg.Payload, om.msg.Tail...)
			continue
		}
		h.length = uint32(size)
		if c.wsig != nil {
			h.flags |= flagSigned
		}
		n := len(out)
		out = append(out, make([]byte, headerLen)...)
		putHeader(out[n:], &h, om.crc)
		pieces = append(pieces, piece{mark, len(out), nil})
		if len(om.msg.Payload) > 0 {
			pieces = append(pieces, piece{ext: om.msg.Payload})
		}
		for _, p := range om.msg.Tail {
			if len(p) > 0 {
				pieces = append(pieces, piece{ext: p})
			}
		}
		mark = len(out)
		if c.wsig != nil {
			out = c.wsig.sign(out, out[n:n+headerLen], contiguous(&om.msg))
		}
	}
	return out, append(pieces, piece{mark, len(out), nil})
}

// contiguous returns msg's payload on the wire as one slice, for the
// signature (AES-GMAC takes its data whole): Payload itself when there is
// no tail, else a copy of both.
func contiguous(msg *Message) []byte {
	if len(msg.Tail) == 0 {
		return msg.Payload
	}
	b := make([]byte, 0, msg.Len())
	b = append(b, msg.Payload...)
	for _, t := range msg.Tail {
		b = append(b, t...)
	}
	return b
}

// writeFrame writes one frame during the handshake.
func (c *conn) writeFrame(kind, flags uint8, payload []byte, prefix []byte) error {
	h := header{kind: kind, flags: flags}
	b := appendFrame(prefix, &h, payload, c.wsig)
	if err := c.writev(net.Buffers{b}); err != nil {
		return c.errOr(err)
	}
	return nil
}

// readFrame reads one handshake frame of the given kind; an error frame
// from the peer becomes ErrRefused with its reason.
func (c *conn) readFrame(kind uint8) (frame, error) {
	f, err := c.fr.read()
	if err != nil {
		return frame{}, c.errOr(err)
	}
	switch f.kind {
	case kind:
		return f, nil
	case kindError:
		return frame{}, fmt.Errorf("%w: %s", ErrRefused, reasonText(f.payload))
	}
	return frame{}, fmt.Errorf("%w: got a %s frame, want %s", ErrProtocol, kindName(f.kind), kindName(kind))
}

func kindName(k uint8) string {
	switch k {
	case kindHello:
		return "hello"
	case kindAuth:
		return "auth"
	case kindSession:
		return "session"
	case kindSessionOK:
		return "session_ok"
	case kindMsg:
		return "msg"
	case kindAck:
		return "ack"
	case kindError:
		return "error"
	}
	return "unknown"
}
