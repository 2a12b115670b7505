package nbd

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

// memBackend is an export held in memory, allocated in 64 KiB blocks, so
// that the protocol tests need no cluster (the RBD backend's tests use
// one). It counts its calls.
type memBackend struct {
	mu       sync.Mutex
	data     []byte
	alloc    map[uint64]bool // 64 KiB blocks written
	readOnly bool
	flushes  int
	fuas     int
}

const memBlock = 64 << 10

func newMem(size int) *memBackend {
	return &memBackend{data: make([]byte, size), alloc: map[uint64]bool{}}
}

// counts returns the flushes and FUA writes so far.
func (m *memBackend) counts() (flushes, fuas int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.flushes, m.fuas
}

// allocated says whether 64 KiB block b holds data.
func (m *memBackend) allocated(b uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.alloc[b]
}

func (m *memBackend) Size() uint64   { return uint64(len(m.data)) }
func (m *memBackend) ReadOnly() bool { return m.readOnly }
func (m *memBackend) ReadAt(_ context.Context, p []byte, off uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	copy(p, m.data[off:])
	return nil
}
func (m *memBackend) WriteAt(_ context.Context, p []byte, off uint64, fua bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	copy(m.data[off:], p)
	for b := off / memBlock; b*memBlock < off+uint64(len(p)); b++ {
		m.alloc[b] = true
	}
	if fua {
		m.fuas++
	}
	return nil
}
func (m *memBackend) Flush(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.flushes++
	return nil
}
func (m *memBackend) Trim(ctx context.Context, off, n uint64) error {
	return m.Zero(ctx, off, n, true)
}
func (m *memBackend) Zero(_ context.Context, off, n uint64, mayTrim bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.data[off : off+n])
	if mayTrim {
		for b := (off + memBlock - 1) / memBlock; (b+1)*memBlock <= off+n; b++ {
			delete(m.alloc, b)
		}
	}
	return nil
}
func (m *memBackend) Allocated(_ context.Context, off, n uint64) ([]proto.Span, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []proto.Span
	for b := off / memBlock; b*memBlock < off+n; b++ {
		if m.alloc[b] {
			out = append(out, proto.Span{Off: b * memBlock, Len: memBlock})
		}
	}
	return out, nil
}

// serve starts a server of exports on a loopback port and shuts it down
// at the test's end.
func serve(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return s, l.Addr().String()
}

// client speaks raw NBD to a server.
type client struct {
	t testing.TB
	c net.Conn
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return &client{t: t, c: c}
}

func (c *client) read(n int) []byte {
	c.t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c.c, b); err != nil {
		c.t.Fatalf("read %d bytes: %v", n, err)
	}
	return b
}

func (c *client) send(b ...[]byte) {
	c.t.Helper()
	for _, x := range b {
		if _, err := c.c.Write(x); err != nil {
			c.t.Fatalf("write: %v", err)
		}
	}
}

// closed fails unless the server closes the connection.
func (c *client) closed() {
	c.t.Helper()
	if n, err := io.ReadFull(c.c, make([]byte, 1)); err == nil {
		c.t.Fatalf("the connection is still open (read %d bytes)", n)
	}
}

// hello reads the greeting and sends client flags.
func (c *client) hello(flags uint32) {
	c.t.Helper()
	g := c.read(18)
	if binary.BigEndian.Uint64(g) != proto.Magic || binary.BigEndian.Uint64(g[8:]) != proto.OptMagic ||
		binary.BigEndian.Uint16(g[16:]) != proto.FlagFixedNewstyle|proto.FlagNoZeroes {
		c.t.Fatalf("greeting %x", g)
	}
	c.send(binary.BigEndian.AppendUint32(nil, flags))
}

func (c *client) opt(opt uint32, data []byte) {
	b := binary.BigEndian.AppendUint64(nil, proto.OptMagic)
	b = binary.BigEndian.AppendUint32(b, opt)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	c.send(b, data)
}

type optReply struct {
	opt, typ uint32
	data     []byte
}

func (c *client) optReply() optReply {
	c.t.Helper()
	h := c.read(20)
	if binary.BigEndian.Uint64(h) != proto.RepMagic {
		c.t.Fatalf("option reply magic in %x", h)
	}
	return optReply{binary.BigEndian.Uint32(h[8:]), binary.BigEndian.Uint32(h[12:]), c.read(int(binary.BigEndian.Uint32(h[16:])))}
}

// want reads an option reply of type typ.
func (c *client) want(opt, typ uint32) []byte {
	c.t.Helper()
	r := c.optReply()
	if r.opt != opt || r.typ != typ {
		c.t.Fatalf("option reply %d type %#x (%q), want option %d type %#x", r.opt, r.typ, r.data, opt, typ)
	}
	return r.data
}

func nameData(name string, infos ...uint16) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(name)))
	b = append(b, name...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(infos)))
	for _, i := range infos {
		b = binary.BigEndian.AppendUint16(b, i)
	}
	return b
}

func metaData(name string, queries ...string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(name)))
	b = append(b, name...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(queries)))
	for _, q := range queries {
		b = binary.BigEndian.AppendUint32(b, uint32(len(q)))
		b = append(b, q...)
	}
	return b
}

// goTo negotiates export name with NBD_OPT_GO (after structured replies
// and base:allocation when structured), and returns its flags.
func (c *client) goTo(name string, structured bool) uint16 {
	c.t.Helper()
	c.hello(proto.ClientFixedNewstyle | proto.ClientNoZeroes)
	return c.negotiateGo(name, structured)
}

// negotiateGo is goTo after the greeting (and after STARTTLS).
func (c *client) negotiateGo(name string, structured bool) uint16 {
	c.t.Helper()
	if structured {
		c.opt(proto.OptStructuredReply, nil)
		c.want(proto.OptStructuredReply, proto.RepAck)
		c.opt(proto.OptSetMetaContext, metaData(name, proto.BaseAllocation))
		if d := c.want(proto.OptSetMetaContext, proto.RepMetaContext); string(d[4:]) != proto.BaseAllocation {
			c.t.Fatalf("meta context %q", d)
		}
		c.want(proto.OptSetMetaContext, proto.RepAck)
	}
	c.opt(proto.OptGo, nameData(name))
	var flags uint16
	for {
		r := c.optReply()
		if r.typ == proto.RepAck {
			return flags
		}
		if r.typ != proto.RepInfo {
			c.t.Fatalf("GO %q: reply type %#x %q", name, r.typ, r.data)
		}
		if binary.BigEndian.Uint16(r.data) == proto.InfoExport {
			flags = binary.BigEndian.Uint16(r.data[10:])
		}
	}
}

func (c *client) request(q proto.Request, payload []byte) {
	c.t.Helper()
	c.send(proto.AppendRequest(nil, q), payload)
}

// simple reads a simple reply's header.
func (c *client) simple() (cookie uint64, errno proto.Errno) {
	c.t.Helper()
	h := c.read(16)
	if binary.BigEndian.Uint32(h) != proto.SimpleReplyMagic {
		c.t.Fatalf("simple reply magic in %x", h)
	}
	return binary.BigEndian.Uint64(h[8:]), proto.Errno(binary.BigEndian.Uint32(h[4:]))
}

type chunk struct {
	flags, typ uint16
	cookie     uint64
	payload    []byte
}

func (c *client) chunk() chunk {
	c.t.Helper()
	h := c.read(proto.ChunkHeaderLen)
	if binary.BigEndian.Uint32(h) != proto.StructuredReplyMagic {
		c.t.Fatalf("structured reply magic in %x", h)
	}
	return chunk{binary.BigEndian.Uint16(h[4:]), binary.BigEndian.Uint16(h[6:]), binary.BigEndian.Uint64(h[8:]), c.read(int(binary.BigEndian.Uint32(h[16:])))}
}

// structuredRead reads the chunks of a READ of n bytes at off into one
// buffer (holes as zeros); it fails on an error chunk.
func (c *client) structuredRead(cookie, off uint64, n int) ([]byte, []chunk) {
	c.t.Helper()
	buf := make([]byte, n)
	var chunks []chunk
	for {
		ch := c.chunk()
		chunks = append(chunks, ch)
		if ch.cookie != cookie {
			c.t.Fatalf("chunk of cookie %d, want %d", ch.cookie, cookie)
		}
		switch ch.typ {
		case proto.ReplyOffsetData:
			at := binary.BigEndian.Uint64(ch.payload) - off
			copy(buf[at:], ch.payload[8:])
		case proto.ReplyOffsetHole:
		case proto.ReplyNone:
		default:
			c.t.Fatalf("chunk type %#x: %q", ch.typ, ch.payload)
		}
		if ch.flags&proto.ReplyFlagDone != 0 {
			return buf, chunks
		}
	}
}

// errorChunk reads an error chunk and returns its errno and message.
func (c *client) errorChunk(cookie uint64) (proto.Errno, string) {
	c.t.Helper()
	ch := c.chunk()
	if ch.typ != proto.ReplyError || ch.cookie != cookie || ch.flags != proto.ReplyFlagDone {
		c.t.Fatalf("chunk %+v, want an error chunk of cookie %d", ch, cookie)
	}
	return proto.Errno(binary.BigEndian.Uint32(ch.payload)), string(ch.payload[6:])
}
