package nbd

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/nbd/proto"
)

func twoExports() (Config, *memBackend, *memBackend) {
	a, b := newMem(1<<20), newMem(512<<10)
	b.readOnly = true
	return Config{Exports: []Export{{Name: "disk", Description: "the disk", Backend: a}, {Name: "ro", Backend: b}}}, a, b
}

// proto.md "Newstyle negotiation": client flags other than the known
// ones, or without fixed newstyle, end the connection.
func TestHandshakeRefusesBadClientFlags(t *testing.T) {
	cfg, _, _ := twoExports()
	_, addr := serve(t, cfg)
	for _, flags := range []uint32{0, 1 << 5} {
		c := dial(t, addr)
		c.hello(flags)
		c.closed()
	}
}

// NBD_OPT_LIST: one NBD_REP_SERVER per export, then an ack; with data,
// NBD_REP_ERR_INVALID.
func TestOptList(t *testing.T) {
	cfg, _, _ := twoExports()
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle)
	c.opt(proto.OptList, nil)
	if d := c.want(proto.OptList, proto.RepServer); !bytes.Equal(d, proto.ServerData("disk", "the disk")) {
		t.Fatalf("first export %q", d)
	}
	if d := c.want(proto.OptList, proto.RepServer); !bytes.Equal(d, proto.ServerData("ro", "")) {
		t.Fatalf("second export %q", d)
	}
	c.want(proto.OptList, proto.RepAck)
	c.opt(proto.OptList, []byte("x"))
	c.want(proto.OptList, proto.RepErrInvalid)
}

// NBD_OPT_INFO: the export's size and flags, the information asked for
// (and the block sizes always), an ack; the connection stays in the
// handshake. An unknown export is NBD_REP_ERR_UNKNOWN, a malformed
// request NBD_REP_ERR_INVALID.
func TestOptInfo(t *testing.T) {
	cfg, _, _ := twoExports()
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle)
	c.opt(proto.OptInfo, nameData("ro", proto.InfoName, proto.InfoDescription, proto.InfoBlockSize, 77))
	got := map[uint16][]byte{}
	for {
		r := c.optReply()
		if r.typ == proto.RepAck {
			break
		}
		if r.typ != proto.RepInfo {
			t.Fatalf("reply %#x %q", r.typ, r.data)
		}
		got[binary.BigEndian.Uint16(r.data)] = r.data
	}
	wantFlags := proto.TransHasFlags | proto.TransReadOnly | proto.TransSendFlush | proto.TransSendFUA | proto.TransCanMultiConn
	if !bytes.Equal(got[proto.InfoExport], proto.InfoExportData(512<<10, wantFlags)) {
		t.Errorf("export info %x, want size 512 KiB and flags %#x", got[proto.InfoExport], wantFlags)
	}
	if string(got[proto.InfoName][2:]) != "ro" {
		t.Errorf("name info %q", got[proto.InfoName])
	}
	if _, ok := got[proto.InfoDescription]; ok {
		t.Error("a description was sent for an export without one")
	}
	if !bytes.Equal(got[proto.InfoBlockSize], proto.InfoBlockSizeData(1, 4096, proto.MaxPayload)) {
		t.Errorf("block size info %x", got[proto.InfoBlockSize])
	}
	if len(got) != 3 {
		t.Errorf("infos %v", got)
	}
	c.opt(proto.OptInfo, nameData("nope"))
	c.want(proto.OptInfo, proto.RepErrUnknown)
	c.opt(proto.OptGo, []byte{0, 0})
	c.want(proto.OptGo, proto.RepErrInvalid)
	// The default export is the first.
	c.opt(proto.OptInfo, nameData(""))
	if d := c.want(proto.OptInfo, proto.RepInfo); binary.BigEndian.Uint64(d[2:]) != 1<<20 {
		t.Fatalf("default export info %x", d)
	}
}

// NBD_OPT_EXPORT_NAME: size, flags and 124 zeros, unless the client set
// NO_ZEROES; an unknown name closes the connection (the option has no
// error reply).
func TestOptExportName(t *testing.T) {
	cfg, a, _ := twoExports()
	_, addr := serve(t, cfg)
	for _, noZeroes := range []bool{false, true} {
		c := dial(t, addr)
		flags := proto.ClientFixedNewstyle
		n := 134
		if noZeroes {
			flags |= proto.ClientNoZeroes
			n = 10
		}
		c.hello(flags)
		c.opt(proto.OptExportName, []byte("disk"))
		r := c.read(n)
		if binary.BigEndian.Uint64(r) != 1<<20 || binary.BigEndian.Uint16(r[8:])&proto.TransReadOnly != 0 || !bytes.Equal(r[10:], make([]byte, n-10)) {
			t.Fatalf("export name reply %x", r)
		}
		if err := a.WriteAt(context.Background(), []byte("hello"), 0, false); err != nil {
			t.Fatal(err)
		}
		c.request(proto.Request{Type: proto.CmdRead, Cookie: 9, Length: 5}, nil)
		if cookie, errno := c.simple(); cookie != 9 || errno != 0 || string(c.read(5)) != "hello" {
			t.Fatalf("read after export name: cookie %d errno %v", cookie, errno)
		}
	}
	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle)
	c.opt(proto.OptExportName, []byte("nope"))
	c.closed()
}

// Unknown options are NBD_REP_ERR_UNSUP; NBD_OPT_ABORT is
// acked and the connection closed; an option over the size limit closes
// it.
func TestOptUnsupportedAbortAndTooBig(t *testing.T) {
	cfg, _, _ := twoExports()
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle)
	for _, opt := range []uint32{4, 11, 1000} {
		c.opt(opt, []byte("data"))
		c.want(opt, proto.RepErrUnsup)
	}
	c.opt(proto.OptAbort, nil)
	c.want(proto.OptAbort, proto.RepAck)
	c.closed()

	c = dial(t, addr)
	c.hello(proto.ClientFixedNewstyle)
	b := binary.BigEndian.AppendUint64(nil, proto.OptMagic)
	b = binary.BigEndian.AppendUint32(b, proto.OptGo)
	c.send(binary.BigEndian.AppendUint32(b, proto.MaxOptionLen+1))
	c.closed()
}

// Meta contexts (proto.md "Metadata querying"): only after structured
// replies; LIST with no query or "base:" lists base:allocation; SET
// selects it and names its id; unknown contexts select nothing.
func TestMetaContexts(t *testing.T) {
	cfg, _, _ := twoExports()
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	c.hello(proto.ClientFixedNewstyle)
	c.opt(proto.OptSetMetaContext, metaData("disk", proto.BaseAllocation))
	c.want(proto.OptSetMetaContext, proto.RepErrInvalid)
	c.opt(proto.OptStructuredReply, []byte("x"))
	c.want(proto.OptStructuredReply, proto.RepErrInvalid)
	c.opt(proto.OptStructuredReply, nil)
	c.want(proto.OptStructuredReply, proto.RepAck)
	for _, queries := range [][]string{nil, {"base:"}, {"qemu:x", proto.BaseAllocation}} {
		c.opt(proto.OptListMetaContext, metaData("disk", queries...))
		if d := c.want(proto.OptListMetaContext, proto.RepMetaContext); string(d[4:]) != proto.BaseAllocation {
			t.Fatalf("list %v: %q", queries, d)
		}
		c.want(proto.OptListMetaContext, proto.RepAck)
	}
	c.opt(proto.OptSetMetaContext, metaData("disk", "qemu:dirty-bitmap:x"))
	c.want(proto.OptSetMetaContext, proto.RepAck)
	c.opt(proto.OptSetMetaContext, metaData("nope", proto.BaseAllocation))
	c.want(proto.OptSetMetaContext, proto.RepErrUnknown)
	c.opt(proto.OptSetMetaContext, []byte{1, 2, 3})
	c.want(proto.OptSetMetaContext, proto.RepErrInvalid)
	c.opt(proto.OptGo, nameData("disk"))
	for c.optReply().typ != proto.RepAck {
	}
	// Nothing selected: BLOCK_STATUS is EINVAL.
	c.request(proto.Request{Type: proto.CmdBlockStatus, Cookie: 1, Length: 4096}, nil)
	if errno, _ := c.errorChunk(1); errno != proto.EINVAL {
		t.Fatalf("block status without a context: %v", errno)
	}
}

// Every command with simple replies, and the errors proto.md names.
func TestCommandsSimple(t *testing.T) {
	cfg, a, _ := twoExports()
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	flags := c.goTo("disk", false)
	if flags&(proto.TransSendTrim|proto.TransSendWriteZeroes|proto.TransSendFUA|proto.TransSendFlush|proto.TransCanMultiConn) == 0 || flags&proto.TransSendDF != 0 {
		t.Fatalf("flags %#x", flags)
	}
	ok := func(cookie uint64) {
		t.Helper()
		if got, errno := c.simple(); got != cookie || errno != 0 {
			t.Fatalf("reply cookie %d errno %v, want cookie %d OK", got, errno, cookie)
		}
	}
	fails := func(cookie uint64, want proto.Errno) {
		t.Helper()
		if got, errno := c.simple(); got != cookie || errno != want {
			t.Fatalf("reply cookie %d errno %v, want cookie %d %v", got, errno, cookie, want)
		}
	}
	data := bytes.Repeat([]byte("cuttle!"), 1000)
	c.request(proto.Request{Type: proto.CmdWrite, Flags: proto.CmdFlagFUA, Cookie: 1, Offset: 4000, Length: uint32(len(data))}, data)
	ok(1)
	if _, fuas := a.counts(); fuas != 1 {
		t.Fatalf("FUA reached the backend %d times", fuas)
	}
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 2, Offset: 4000, Length: uint32(len(data))}, nil)
	ok(2)
	if got := c.read(len(data)); !bytes.Equal(got, data) {
		t.Fatal("read back differs")
	}
	c.request(proto.Request{Type: proto.CmdFlush, Cookie: 3}, nil)
	ok(3)
	c.request(proto.Request{Type: proto.CmdTrim, Cookie: 4, Offset: 4000, Length: 10}, nil)
	ok(4)
	c.request(proto.Request{Type: proto.CmdWriteZeroes, Flags: proto.CmdFlagNoHole | proto.CmdFlagFUA, Cookie: 5, Offset: 4010, Length: 10}, nil)
	ok(5)
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 6, Offset: 4000, Length: 30}, nil)
	ok(6)
	if got := c.read(30); !bytes.Equal(got, append(make([]byte, 20), data[20:30]...)) {
		t.Fatalf("after trim and zeroes: %q", got)
	}
	if flushes, _ := a.counts(); flushes != 2 { // FLUSH, and WRITE_ZEROES with FUA
		t.Fatalf("%d flushes reached the backend", flushes)
	}
	// Errors: the reply carries the errno and no data; the connection
	// goes on.
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 7, Offset: 1 << 20, Length: 1}, nil)
	fails(7, proto.EINVAL)
	c.request(proto.Request{Type: proto.CmdWrite, Cookie: 8, Offset: 1<<20 - 1, Length: 2}, []byte("xy"))
	fails(8, proto.ENOSPC)
	c.request(proto.Request{Type: 42, Cookie: 9}, nil)
	fails(9, proto.EINVAL)
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 10, Length: proto.MaxPayload + 1}, nil)
	fails(10, proto.EOVERFLOW)
	c.request(proto.Request{Type: proto.CmdRead, Flags: proto.CmdFlagDF, Cookie: 11, Length: 1}, nil)
	fails(11, proto.EINVAL)
	big := make([]byte, proto.MaxPayload+1)
	c.request(proto.Request{Type: proto.CmdWrite, Cookie: 12, Length: uint32(len(big))}, big)
	fails(12, proto.EINVAL)
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 13, Offset: 4020, Length: 3}, nil)
	ok(13)
	if got := c.read(3); !bytes.Equal(got, data[20:23]) {
		t.Fatalf("read after the errors: %q", got)
	}
	c.request(proto.Request{Type: proto.CmdDisc, Cookie: 14}, nil)
	c.closed()
}

// A read-only export refuses every change with EPERM.
func TestReadOnlyExportRefusesWrites(t *testing.T) {
	cfg, _, b := twoExports()
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	if flags := c.goTo("ro", true); flags&proto.TransReadOnly == 0 || flags&(proto.TransSendTrim|proto.TransSendWriteZeroes) != 0 {
		t.Fatalf("flags %#x", flags)
	}
	for i, q := range []proto.Request{
		{Type: proto.CmdWrite, Length: 3},
		{Type: proto.CmdTrim, Length: 3},
		{Type: proto.CmdWriteZeroes, Length: 3},
	} {
		q.Cookie = uint64(i)
		var payload []byte
		if q.Type == proto.CmdWrite {
			payload = []byte("abc")
		}
		c.request(q, payload)
		if errno, msg := c.errorChunk(q.Cookie); errno != proto.EPERM || msg == "" {
			t.Fatalf("command %d on a read-only export: %v %q", q.Type, errno, msg)
		}
	}
	if b.allocated(0) {
		t.Fatal("the read-only export was written")
	}
}

// Structured replies: a READ's zero blocks come as holes, with DF as one
// chunk; BLOCK_STATUS describes data and holes; errors are error chunks
// with a message.
func TestStructuredReadAndBlockStatus(t *testing.T) {
	cfg, a, _ := twoExports()
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	if flags := c.goTo("disk", true); flags&proto.TransSendDF == 0 {
		t.Fatalf("flags %#x without DF", flags)
	}
	payload := bytes.Repeat([]byte{7}, memBlock)
	c.request(proto.Request{Type: proto.CmdWrite, Cookie: 1, Offset: 2 * memBlock, Length: memBlock}, payload)
	if ch := c.chunk(); ch.typ != proto.ReplyNone || ch.flags != proto.ReplyFlagDone || ch.cookie != 1 {
		t.Fatalf("write reply %+v", ch)
	}
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 2, Offset: 0, Length: 4 * memBlock}, nil)
	buf, chunks := c.structuredRead(2, 0, 4*memBlock)
	if !bytes.Equal(buf[2*memBlock:3*memBlock], payload) || !bytes.Equal(buf[:2*memBlock], make([]byte, 2*memBlock)) {
		t.Fatal("structured read differs")
	}
	var types []uint16
	for _, ch := range chunks {
		types = append(types, ch.typ)
	}
	if want := []uint16{proto.ReplyOffsetHole, proto.ReplyOffsetData, proto.ReplyOffsetHole}; !equal(types, want) {
		t.Fatalf("chunk types %v, want %v", types, want)
	}
	c.request(proto.Request{Type: proto.CmdRead, Flags: proto.CmdFlagDF, Cookie: 3, Offset: memBlock, Length: 2 * memBlock}, nil)
	if buf, chunks := c.structuredRead(3, memBlock, 2*memBlock); len(chunks) != 1 || !bytes.Equal(buf[memBlock:], payload) {
		t.Fatalf("DF read in %d chunks", len(chunks))
	}
	hole := proto.StateHole | proto.StateZero
	status := func(cookie uint64, flags uint16, off uint64, n uint32) []proto.Extent {
		t.Helper()
		c.request(proto.Request{Type: proto.CmdBlockStatus, Flags: flags, Cookie: cookie, Offset: off, Length: n}, nil)
		ch := c.chunk()
		if ch.typ != proto.ReplyBlockStatus || ch.cookie != cookie || ch.flags != proto.ReplyFlagDone || binary.BigEndian.Uint32(ch.payload) != metaContextID {
			t.Fatalf("block status reply %+v", ch)
		}
		var out []proto.Extent
		for p := ch.payload[4:]; len(p) >= 8; p = p[8:] {
			out = append(out, proto.Extent{Length: binary.BigEndian.Uint32(p), Flags: binary.BigEndian.Uint32(p[4:])})
		}
		return out
	}
	if got, want := status(4, 0, 0, 1<<20), []proto.Extent{{Length: 2 * memBlock, Flags: hole}, {Length: memBlock, Flags: 0}, {Length: 1<<20 - 3*memBlock, Flags: hole}}; !equal(got, want) {
		t.Fatalf("block status %v, want %v", got, want)
	}
	if got, want := status(5, proto.CmdFlagReqOne, 0, 1<<20), []proto.Extent{{Length: 2 * memBlock, Flags: hole}}; !equal(got, want) {
		t.Fatalf("block status REQ_ONE %v, want %v", got, want)
	}
	c.request(proto.Request{Type: proto.CmdWriteZeroes, Cookie: 6, Offset: 2 * memBlock, Length: memBlock}, nil)
	c.chunk()
	if got, want := status(7, 0, 0, 1<<20), []proto.Extent{{Length: 1 << 20, Flags: hole}}; !equal(got, want) || a.allocated(2) {
		t.Fatalf("block status after WRITE_ZEROES %v, want %v", got, want)
	}
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 8, Offset: 1 << 20, Length: 1}, nil)
	if errno, msg := c.errorChunk(8); errno != proto.EINVAL || msg != "read past the end of the export" {
		t.Fatalf("read past the end: %v %q", errno, msg)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// gated is a backend whose reads at offset 0 wait for release, counting
// how many reads run at once: a decorator for concurrency tests.
type gated struct {
	*memBackend
	release         chan struct{}
	entered         chan struct{}
	mu              sync.Mutex
	running, maxRun int
}

func (g *gated) ReadAt(ctx context.Context, p []byte, off uint64) error {
	g.mu.Lock()
	g.running++
	g.maxRun = max(g.maxRun, g.running)
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.running--; g.mu.Unlock() }()
	if off == 0 {
		g.entered <- struct{}{}
		<-g.release
	}
	return g.memBackend.ReadAt(ctx, p, off)
}

// Requests run concurrently and replies come as each finishes: a read
// held up does not hold up the one after it (proto.md: replies need not
// be in order).
func TestRepliesOutOfOrder(t *testing.T) {
	g := &gated{memBackend: newMem(1 << 20), release: make(chan struct{}), entered: make(chan struct{}, 8)}
	_, addr := serve(t, Config{Exports: []Export{{Name: "g", Backend: g}}})
	c := dial(t, addr)
	c.goTo("g", false)
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 1, Offset: 0, Length: 8}, nil)
	<-g.entered
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 2, Offset: 8, Length: 8}, nil)
	if cookie, errno := c.simple(); cookie != 2 || errno != 0 {
		t.Fatalf("first reply: cookie %d %v, want 2", cookie, errno)
	}
	c.read(8)
	close(g.release)
	if cookie, _ := c.simple(); cookie != 1 {
		t.Fatalf("second reply: cookie %d, want 1", cookie)
	}
	c.read(8)
}

// At most MaxInFlight requests of a connection run at once, and at most
// MaxInFlightBytes of their data; the rest wait, and every one is
// answered.
func TestInFlightBounded(t *testing.T) {
	t.Run("requests", func(t *testing.T) { testInFlightBounded(t, Config{MaxInFlight: 2}) })
	t.Run("bytes", func(t *testing.T) { testInFlightBounded(t, Config{MaxInFlightBytes: 16}) })
}

// testInFlightBounded sends six 8-byte reads that cfg lets two of run
// at once.
func testInFlightBounded(t *testing.T, cfg Config) {
	g := &gated{memBackend: newMem(1 << 20), release: make(chan struct{}), entered: make(chan struct{}, 16)}
	cfg.Exports = []Export{{Name: "g", Backend: g}}
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	c.goTo("g", false)
	for i := range 6 {
		c.request(proto.Request{Type: proto.CmdRead, Cookie: uint64(i), Length: 8}, nil)
	}
	<-g.entered
	<-g.entered
	close(g.release)
	seen := map[uint64]bool{}
	for range 6 {
		cookie, errno := c.simple()
		c.read(8)
		if errno != 0 || seen[cookie] {
			t.Fatalf("reply cookie %d %v (seen %v)", cookie, errno, seen)
		}
		seen[cookie] = true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.maxRun != 2 {
		t.Fatalf("%d reads ran at once, want 2", g.maxRun)
	}
}

// A request that loses the framing (a bad magic) closes its connection
// only: the server serves the next one.
func TestBadMagicClosesOnlyThatConnection(t *testing.T) {
	cfg, _, _ := twoExports()
	_, addr := serve(t, cfg)
	c := dial(t, addr)
	c.goTo("disk", false)
	c.send([]byte("this is not an NBD request header"))
	c.closed()
	c = dial(t, addr)
	c.goTo("disk", false)
	c.request(proto.Request{Type: proto.CmdFlush, Cookie: 5}, nil)
	if cookie, errno := c.simple(); cookie != 5 || errno != 0 {
		t.Fatalf("flush on a new connection: %d %v", cookie, errno)
	}
}

// Shutdown answers what is in flight, flushes the writable exports and
// closes the connections; Serve returns ErrServerClosed (checked by
// serve's cleanup).
func TestShutdownFlushes(t *testing.T) {
	cfg, a, b := twoExports()
	s, addr := serve(t, cfg)
	c := dial(t, addr)
	c.goTo("disk", false)
	c.request(proto.Request{Type: proto.CmdWrite, Cookie: 1, Length: 3}, []byte("abc"))
	c.simple()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.closed()
	if fa, _ := a.counts(); fa != 1 {
		t.Fatalf("%d flushes of the writable export, want 1", fa)
	}
	if fb, _ := b.counts(); fb != 0 {
		t.Fatalf("%d flushes of the read-only export, want 0", fb)
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Fatal("the listener still accepts")
	}
}

// Random bytes after a good handshake and random handshakes: the server
// answers or closes, and stays up for a well-behaved client.
func TestGarbageNeverStopsTheServer(t *testing.T) {
	cfg, _, _ := twoExports()
	_, addr := serve(t, cfg)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		c := dial(t, addr)
		_ = c.c.SetDeadline(time.Now().Add(2 * time.Second))
		if i%2 == 0 {
			c.goTo("disk", i%4 == 0)
		}
		junk := make([]byte, rng.IntN(200))
		for j := range junk {
			junk[j] = byte(rng.Uint32())
		}
		// Make some of it look like requests.
		if len(junk) >= proto.RequestLen && i%3 == 0 {
			binary.BigEndian.PutUint32(junk, proto.RequestMagic)
		}
		_, _ = c.c.Write(junk)
		c.c.Close()
	}
	c := dial(t, addr)
	c.goTo("disk", true)
	c.request(proto.Request{Type: proto.CmdFlush, Cookie: 1}, nil)
	if ch := c.chunk(); ch.typ != proto.ReplyNone || ch.cookie != 1 {
		t.Fatalf("flush after the garbage: %+v", ch)
	}
}

// List speaks the handshake's LIST and INFO to a server.
func TestList(t *testing.T) {
	cfg, _, _ := twoExports()
	_, addr := serve(t, cfg)
	got, err := List(context.Background(), "tcp", addr, nil)
	want := []ListedExport{{Name: "disk", Description: "the disk", Size: 1 << 20, MultiConn: true}, {Name: "ro", Size: 512 << 10, ReadOnly: true, MultiConn: true}}
	if err != nil || !equal(got, want) {
		t.Fatalf("List = %+v, %v; want %+v", got, err, want)
	}
}

// A client that does not finish the handshake in HandshakeTimeout is
// disconnected; one that does is not, however long it then idles.
func TestHandshakeTimeout(t *testing.T) {
	cfg, _, _ := twoExports()
	cfg.HandshakeTimeout = time.Second
	_, addr := serve(t, cfg)
	idle := dial(t, addr)
	idle.hello(proto.ClientFixedNewstyle)
	c := dial(t, addr)
	c.goTo("disk", false)
	idle.closed() // after a second
	c.request(proto.Request{Type: proto.CmdFlush, Cookie: 1}, nil)
	if cookie, errno := c.simple(); cookie != 1 || errno != 0 {
		t.Fatalf("flush after the handshake timeout passed: %d %v", cookie, errno)
	}
}

// Shutdown answers the requests in flight before it closes their
// connection.
func TestShutdownAnswersInFlight(t *testing.T) {
	g := &gated{memBackend: newMem(1 << 20), release: make(chan struct{}), entered: make(chan struct{}, 1)}
	s, addr := serve(t, Config{Exports: []Export{{Name: "g", Backend: g}}})
	c := dial(t, addr)
	c.goTo("g", false)
	c.request(proto.Request{Type: proto.CmdRead, Cookie: 7, Length: 8}, nil)
	<-g.entered
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }()
	close(g.release)
	if cookie, errno := c.simple(); cookie != 7 || errno != 0 {
		t.Fatalf("the read in flight: cookie %d %v", cookie, errno)
	}
	c.read(8)
	c.closed()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
