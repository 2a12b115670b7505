package nbd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

// holeGranularity is the block size at which a READ's zeros are sent as
// holes.
const holeGranularity = 64 << 10

// maxStatusLen bounds the range one BLOCK_STATUS answers (a client asks
// again from where the reply ended).
const maxStatusLen = 1 << 30

// transmit reads requests until DISC, an error that loses the framing,
// or Shutdown, running up to MaxInFlight of them at once; it returns
// once every request read has been answered.
func (c *conn) transmit() error {
	sem := make(chan struct{}, c.s.cfg.MaxInFlight)
	bytes := newByteBudget(c.s.cfg.MaxInFlightBytes)
	var wg sync.WaitGroup
	defer wg.Wait()
	var hb [proto.RequestLen]byte
	for {
		if _, err := io.ReadFull(c.nc, hb[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil // the client went away without DISC
			}
			return fmt.Errorf("request: %w", err)
		}
		q, err := proto.ParseRequest(hb[:])
		if err != nil {
			return err
		}
		// The data a READ or WRITE holds waits for room first (a WRITE's
		// before it is read off the wire).
		var held int64
		if (q.Type == proto.CmdRead || q.Type == proto.CmdWrite) && q.Length <= proto.MaxPayload {
			held = int64(q.Length)
			bytes.acquire(held)
		}
		var payload []byte
		if q.Type == proto.CmdWrite {
			if q.Length > proto.MaxPayload {
				// Read past the data, then refuse it.
				if _, err := io.CopyN(io.Discard, c.nc, int64(q.Length)); err != nil {
					return fmt.Errorf("write data: %w", err)
				}
			} else {
				payload = make([]byte, q.Length)
				if _, err := io.ReadFull(c.nc, payload); err != nil {
					return fmt.Errorf("write data: %w", err)
				}
			}
		}
		st := proto.ExportState{Size: c.exp.Backend.Size(), ReadOnly: c.exp.Backend.ReadOnly(), Structured: c.structured, MetaContext: c.metaSet}
		if errno, why := proto.Check(q, st); errno != 0 {
			bytes.release(held)
			if err := c.sendError(q, errno, why); err != nil {
				return err
			}
			continue
		}
		if q.Type == proto.CmdDisc {
			return nil // the deferred wait answers what is in flight
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { bytes.release(held); <-sem; wg.Done() }()
			if err := c.handle(q, payload); err != nil {
				c.log.Info("nbd: reply failed", "err", err)
				c.raw.Close()
			}
		}()
	}
}

// byteBudget bounds the bytes of the requests in flight: acquire waits
// until n fit, or until nothing else is held (so that a request larger
// than the budget runs alone rather than never).
type byteBudget struct {
	mu         sync.Mutex
	cond       *sync.Cond
	limit, use int64
}

func newByteBudget(limit int64) *byteBudget {
	b := &byteBudget{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *byteBudget) acquire(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.use > 0 && b.use+n > b.limit {
		b.cond.Wait()
	}
	b.use += n
}

func (b *byteBudget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.use -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// handle runs one checked request and sends its reply.
func (c *conn) handle(q proto.Request, payload []byte) error {
	b, ctx := c.exp.Backend, c.ctx
	var err error
	switch q.Type {
	case proto.CmdRead:
		return c.read(q)
	case proto.CmdWrite:
		err = b.WriteAt(ctx, payload, q.Offset, q.Flags&proto.CmdFlagFUA != 0)
	case proto.CmdFlush:
		err = b.Flush(ctx)
	case proto.CmdTrim:
		err = b.Trim(ctx, q.Offset, uint64(q.Length))
	case proto.CmdWriteZeroes:
		err = b.Zero(ctx, q.Offset, uint64(q.Length), q.Flags&proto.CmdFlagNoHole == 0)
	case proto.CmdBlockStatus:
		return c.blockStatus(q)
	}
	if err == nil && q.Flags&proto.CmdFlagFUA != 0 && q.Type != proto.CmdWrite {
		err = b.Flush(ctx)
	}
	if err != nil {
		return c.sendFailure(q, err)
	}
	return c.sendDone(q)
}

func (c *conn) read(q proto.Request) error {
	buf := make([]byte, q.Length)
	if err := c.exp.Backend.ReadAt(c.ctx, buf, q.Offset); err != nil {
		return c.sendFailure(q, err)
	}
	if !c.structured {
		return c.send(proto.AppendSimpleReply(nil, q.Cookie, 0), buf)
	}
	runs := proto.Runs(buf, holeGranularity)
	if q.Flags&proto.CmdFlagDF != 0 && len(runs) > 1 {
		runs = []proto.Run{{Off: 0, Len: len(buf)}} // one chunk
	}
	if len(runs) == 0 { // a read of 0 bytes
		return c.sendDone(q)
	}
	var bufs net.Buffers
	for i, r := range runs {
		var flags uint16
		if i == len(runs)-1 {
			flags = proto.ReplyFlagDone
		}
		off := q.Offset + uint64(r.Off)
		if r.Zero {
			bufs = append(bufs, proto.AppendHoleChunk(nil, q.Cookie, flags, off, uint32(r.Len)))
		} else {
			bufs = append(bufs, proto.AppendDataChunk(nil, q.Cookie, flags, off, r.Len), buf[r.Off:r.Off+r.Len])
		}
	}
	return c.send(bufs...)
}

func (c *conn) blockStatus(q proto.Request) error {
	length := min(uint64(q.Length), maxStatusLen)
	var data []proto.Span
	if a, ok := c.exp.Backend.(Allocator); ok {
		var err error
		if data, err = a.Allocated(c.ctx, q.Offset, length); err != nil {
			return c.sendFailure(q, err)
		}
	} else {
		data = []proto.Span{{Off: q.Offset, Len: length}}
	}
	ext := proto.AllocationExtents(q.Offset, length, data, q.Flags&proto.CmdFlagReqOne != 0)
	return c.send(proto.AppendBlockStatusChunk(nil, q.Cookie, proto.ReplyFlagDone, metaContextID, ext))
}

// sendDone answers success without data.
func (c *conn) sendDone(q proto.Request) error {
	if c.structured {
		return c.send(proto.AppendChunk(nil, q.Cookie, proto.ReplyFlagDone, proto.ReplyNone, 0))
	}
	return c.send(proto.AppendSimpleReply(nil, q.Cookie, 0))
}

// sendFailure answers a backend's failure.
func (c *conn) sendFailure(q proto.Request, err error) error {
	errno := errnoOf(err)
	if errno == proto.ESHUTDOWN || errno == proto.EIO {
		c.log.Warn("nbd: request failed", "cmd", q.Type, "offset", q.Offset, "length", q.Length, "errno", errno.String(), "err", err)
	}
	return c.sendError(q, errno, err.Error())
}

// sendError answers an error, with a message where replies carry one.
func (c *conn) sendError(q proto.Request, errno proto.Errno, msg string) error {
	if c.structured {
		return c.send(proto.AppendErrorChunk(nil, q.Cookie, proto.ReplyFlagDone, errno, msg))
	}
	return c.send(proto.AppendSimpleReply(nil, q.Cookie, errno))
}

// tlsJoinMax bounds the replies joined into one buffer over TLS.
const tlsJoinMax = 256 << 10

// send writes one whole reply; replies never interleave. Over TLS, where
// each Write is a record and a system call (no writev), a reply of
// several small buffers is joined into one first.
func (c *conn) send(bufs ...[]byte) error {
	if c.tls && len(bufs) > 1 {
		n := 0
		for _, b := range bufs {
			n += len(b)
		}
		if n <= tlsJoinMax {
			joined := make([]byte, 0, n)
			for _, b := range bufs {
				joined = append(joined, b...)
			}
			bufs = [][]byte{joined}
		}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	nb := net.Buffers(bufs)
	_, err := nb.WriteTo(c.nc)
	return err
}
