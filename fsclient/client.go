package fsclient

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/cuttlestore/cuttle/fsclient/internal/captab"
	"github.com/cuttlestore/cuttle/fsclient/internal/session"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// RootIno is the inode number of a file system's root directory.
const RootIno = 1

// Options tune a mount.
type Options struct {
	// Root is the directory of the file system the mount starts at
	// (default "/"); the client key's mds caps must allow it.
	Root string
	// Caller is the identity requests are made as when the context
	// carries none (WithCaller). Nil: the process's uid, gid and groups.
	Caller *Caller
	// Data bounds each open file's buffers.
	Data DataOptions
	// ReleaseDelay is how long the caps of a closed file are kept
	// (default 5 s).
	ReleaseDelay time.Duration
	// Tick is how often the session's and caps' timers run (default
	// 1 s); MapPoll how often the MDS map is read from the monitors
	// (default 1 s; at once when the connection to the MDS fails).
	Tick, MapPoll time.Duration
	// Hostname is reported to the MDS (default os.Hostname).
	Hostname string
	// Logger receives the client's logs (default: the connection's).
	Logger *slog.Logger
}

func (o Options) withDefaults(conn *rados.Conn) Options {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.MapPoll <= 0 {
		o.MapPoll = time.Second
	}
	if o.Hostname == "" {
		o.Hostname, _ = os.Hostname()
	}
	if o.Logger == nil {
		o.Logger = conn.Logger()
	}
	return o
}

// Caller is who a request is made as: the MDS checks permissions with
// it.
type Caller struct {
	UID, GID uint32
	Groups   []uint32
}

type callerKey struct{}

// WithCaller returns a context whose requests are made as who.
func WithCaller(ctx context.Context, who Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, who)
}

// processCaller is the process's identity.
func processCaller() Caller {
	c := Caller{UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	if gs, err := os.Getgroups(); err == nil {
		for _, g := range gs {
			c.Groups = append(c.Groups, uint32(g))
		}
	}
	return c
}

// Client is a mounted file system. Its methods are safe for concurrent
// use.
type Client struct {
	conn *rados.Conn
	// closing makes Close's work happen once; closeErr is its result.
	closing  sync.Once
	closeErr error
	fsName   string
	opts     Options
	log      *slog.Logger
	clock    clock.Clock
	ms       *msgr.Messenger
	caller   Caller

	runCtx context.Context
	cancel context.CancelFunc
	stop   chan struct{}
	pollCh chan struct{}
	wg     sync.WaitGroup

	mu        sync.Mutex
	sess      *session.Session
	caps      *captab.Table
	mdsPeer   auth.EntityName
	mdsConn   *msgr.Session
	calls     map[uint64]*call
	inodes    map[uint64]*inode
	dentries  map[dentryKey]dentry
	locks     map[uint64][]wire.FileLock // held, by inode, for a reconnect
	flushVals map[uint64]flushVal
	changed   chan struct{}
	pollFlag  bool
	info      fsInfo
	ended     error
	pools     map[int64]*rados.IOContext
	rootIno   uint64
	clientID  uint64
	inval     Invalidate
}

// SetInvalidate sets what the client calls to drop a kernel's cached
// attributes and names when their caps or leases are revoked (call it
// before the mount serves).
func (c *Client) SetInvalidate(inv Invalidate) {
	c.mu.Lock()
	c.inval = inv
	c.mu.Unlock()
}

// inode is what the client knows of one inode.
type inode struct {
	stat  wire.InodeStat
	data  *fileData // while open
	opens int
	// attrUntil: a directory's attributes are leased until then (the
	// MDS revokes the lease before another client changes them).
	attrUntil time.Time
	// kernelUntil: a kernel (the mount) was given the attributes to
	// keep until then (kernelStat), and has not been told to drop them
	// since.
	kernelUntil time.Time
}

// kernelKeeps reports whether a kernel may still be keeping the inode's
// attributes at now.
func (in *inode) kernelKeeps(now time.Time) bool { return now.Before(in.kernelUntil) }

type dentryKey struct {
	dir  uint64
	name string
}

// dentry is a cached name, valid until its lease ends; ino 0: the name
// does not exist.
type dentry struct {
	ino   uint64
	until time.Time
}

// Invalidate is how the client tells a kernel (the FUSE mount) to drop
// what it caches when a cap or lease that allowed it is revoked, or when
// the MDS reports a size or mtime the kernel was given otherwise: the
// client calls them, and acks a revocation only after Inode and Entry
// return.
type Invalidate struct {
	// Inode drops the attributes of ino: the kernel asks for them at
	// their next use, and drops its cached pages then if the size or
	// mtime changed. It must not wait for the kernel's requests (an
	// attributes-only notification does not).
	Inode func(ino uint64)
	// Data drops ino's cached pages from off to the end (a file that
	// shrank under the kernel), and its attributes. It may wait for the
	// kernel's reads of those pages to end: the client never waits for
	// it.
	Data func(ino uint64, off int64)
	// Entry drops the name in directory dir.
	Entry func(dir uint64, name string)
}

// Mount mounts file system fsName through conn: it finds the daemon
// holding the file system's rank 0 in the MDS map, opens a session with
// it and looks up the mount's root. The connection must stay open until
// Close.
func Mount(ctx context.Context, conn *rados.Conn, fsName string, opts Options) (*Client, error) {
	info, err := readFS(ctx, conn, fsName)
	if err != nil {
		return nil, err
	}
	return mount(ctx, conn, fsName, opts, info)
}

// mount mounts file system fsName whose MDS-map entry is info.
func mount(ctx context.Context, conn *rados.Conn, fsName string, opts Options, info fsInfo) (*Client, error) {
	opts = opts.withDefaults(conn)
	c := &Client{conn: conn, fsName: fsName, opts: opts, log: opts.Logger.With("fs", fsName), clock: conn.Clock(),
		stop: make(chan struct{}), pollCh: make(chan struct{}, 1),
		calls: map[uint64]*call{}, inodes: map[uint64]*inode{}, dentries: map[dentryKey]dentry{},
		locks: map[uint64][]wire.FileLock{}, flushVals: map[uint64]flushVal{}, changed: make(chan struct{}),
		pools: map[int64]*rados.IOContext{}, rootIno: RootIno}
	if opts.Caller != nil {
		c.caller = *opts.Caller
	} else {
		c.caller = processCaller()
	}
	id := conn.GlobalID()
	if id == 0 {
		// Auth none: no global id; a random one names the session.
		var b [8]byte
		_, _ = crand.Read(b[:])
		id = binary.LittleEndian.Uint64(b[:])>>1 | 1
	}
	c.clientID = id
	c.sess = session.New(session.Config{Client: conn.EntityName(), ClientID: id, Hostname: opts.Hostname,
		Root: opts.Root, Version: "cuttle", Instance: conn.Instance()})
	c.caps = captab.New(captab.Config{ReleaseDelay: opts.ReleaseDelay})
	c.info = info
	ms, err := conn.MDSMessenger(c)
	if err != nil {
		return nil, fmt.Errorf("fsclient: mount %s: %w", fsName, err)
	}
	c.ms = ms
	c.runCtx, c.cancel = context.WithCancel(context.Background())
	c.mu.Lock()
	c.sess.MapChanged(info.Rank0, c.clock.Now())
	c.runLocked()
	c.mu.Unlock()
	c.wg.Add(1)
	go c.loop()
	if opts.Root != "/" {
		ino, _, err := c.walk(ctx, opts.Root, true)
		if err == nil {
			c.rootIno = ino
		} else {
			c.Close(context.Background())
			return nil, fmt.Errorf("fsclient: mount %s:%s: %w", fsName, opts.Root, err)
		}
	} else if _, err := c.getattr(ctx, RootIno, 0); err != nil {
		c.Close(context.Background())
		return nil, fmt.Errorf("fsclient: mount %s: %w", fsName, err)
	}
	return c, nil
}

// ClientID returns the id the MDS knows this client by.
func (c *Client) ClientID() uint64 { return c.clientID }

// Close flushes every open file, closes the session with the MDS and
// stops the client. Files still open are flushed, not closed. Calling it
// again returns the first call's result.
func (c *Client) Close(ctx context.Context) error {
	c.closing.Do(func() { c.closeErr = c.close(ctx) })
	return c.closeErr
}

// close is Close's work, done once.
func (c *Client) close(ctx context.Context) error {
	var first error
	c.mu.Lock()
	var datas []*fileData
	for _, in := range c.inodes {
		if in.data != nil {
			datas = append(datas, in.data)
		}
	}
	c.mu.Unlock()
	for _, d := range datas {
		if err := d.Flush(ctx); err != nil && first == nil {
			first = err
		}
	}
	c.mu.Lock()
	// Give every cap back (with its dirty size and mtime) before the
	// close, as Ceph's client does on unmount: the MDS fences a session
	// that ends holding write caps.
	// runLocked sends session messages before cap messages: send the
	// releases first so that they reach the MDS before the close.
	c.caps.ReleaseAll()
	c.runLocked()
	c.sess.Close()
	c.runLocked()
	c.mu.Unlock()
	// Wait for the MDS to answer the close, briefly.
	wait := c.clock.NewTimer(2 * time.Second)
	for {
		c.mu.Lock()
		closed := c.sess.State() == session.Closed
		ch := c.changed
		c.mu.Unlock()
		if closed {
			break
		}
		select {
		case <-ch:
			continue
		case <-wait.C():
		case <-ctx.Done():
		}
		break
	}
	wait.Stop()
	close(c.stop)
	c.cancel()
	c.wg.Wait()
	c.ms.Close()
	return first
}

// do sends a metadata request and waits for its first reply; a negative
// result comes back as the errno. With safe, it waits for the journal.
func (c *Client) do(ctx context.Context, req *wire.ClientRequest, safe bool) (*wire.ClientReply, error) {
	who, ok := ctx.Value(callerKey{}).(Caller)
	if !ok {
		who = c.caller
	}
	req.UID, req.GID, req.Groups = who.UID, who.GID, who.Groups
	c.mu.Lock()
	if c.ended != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("fsclient: %w", c.ended)
	}
	w := &call{done: make(chan struct{}), safe: make(chan struct{}), req: req, sent: c.clock.Now()}
	if req.Op.IsWrite() {
		c.dropLeasesFor(req)
	}
	tid := c.sess.Submit(req)
	c.calls[tid] = w
	c.runLocked()
	c.mu.Unlock()
	select {
	case <-w.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("fsclient: %s: %w", req.Op, ctx.Err())
	}
	if w.err != nil {
		return nil, fmt.Errorf("fsclient: %s: %w", req.Op, w.err)
	}
	if safe && w.reply.Result == 0 {
		select {
		case <-w.safe:
		case <-ctx.Done():
			return nil, fmt.Errorf("fsclient: %s: %w", req.Op, ctx.Err())
		}
		if w.safeErr != nil {
			return nil, fmt.Errorf("fsclient: %s: not journaled: %w", req.Op, w.safeErr)
		}
	}
	if w.reply.Result < 0 {
		return w.reply, errnoErr(w.reply.Result)
	}
	return w.reply, nil
}

// waitCaps waits until the client holds need on ino under a live
// session, and returns the caps then.
func (c *Client) waitCaps(ctx context.Context, ino uint64, need locker.Caps) (locker.Caps, bool, error) {
	for {
		c.mu.Lock()
		issued, lazy := c.caps.Issued(ino)
		ok := issued&need == need && c.sess.CapsValid(c.clock.Now())
		ended, ch := c.ended, c.changed
		c.mu.Unlock()
		if ok {
			return issued, lazy, nil
		}
		if ended != nil {
			return 0, false, fmt.Errorf("fsclient: %w", ended)
		}
		if issued == 0 {
			return 0, false, fmt.Errorf("fsclient: inode %#x: no cap (the file is not open): %w", ino, errBadFD)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, false, fmt.Errorf("fsclient: waiting for caps %v on %#x: %w", need, ino, ctx.Err())
		}
	}
}

// ioContext returns an I/O context on pool.
func (c *Client) ioContext(pool int64) (*rados.IOContext, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if io := c.pools[pool]; io != nil {
		return io, nil
	}
	name, err := c.conn.PoolName(pool)
	if err != nil {
		return nil, fmt.Errorf("fsclient: data pool %d: %w", pool, err)
	}
	io, err := c.conn.OpenIOContext(name)
	if err != nil {
		return nil, fmt.Errorf("fsclient: data pool %s: %w", name, err)
	}
	c.pools[pool] = io
	return io, nil
}

// striperFor returns a striper over the layout of s.
func (c *Client) striperFor(s *wire.InodeStat) (*striper.Striper, error) {
	l := layout.Layout{ObjectSize: s.Layout.ObjectSize, StripeUnit: s.Layout.StripeUnit, StripeCount: s.Layout.StripeCount,
		Pool: s.Layout.Pool, Namespace: s.Layout.PoolNamespace}
	if l.ObjectSize == 0 && len(c.info.DataPools) > 0 {
		l = layout.Default(c.info.DataPools[0])
	}
	io, err := c.ioContext(l.Pool)
	if err != nil {
		return nil, err
	}
	if l.Namespace != "" {
		// An I/O context per namespace would be shared by files of
		// several namespaces: open one of our own.
		name, _ := c.conn.PoolName(l.Pool)
		if io, err = c.conn.OpenIOContext(name); err != nil {
			return nil, err
		}
		io.SetNamespace(l.Namespace)
	}
	st, err := striper.New(io, l, striper.Options{})
	if err != nil {
		return nil, fmt.Errorf("fsclient: inode %#x: %w", s.Ino, err)
	}
	return st, nil
}

// errBadFD marks I/O on a file the client holds no cap for.
var errBadFD = fmt.Errorf("file not open: %w", syscall.EBADF)
