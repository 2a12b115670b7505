package mdcache

import (
	"context"
	"errors"
	"strings"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// errRetry: the operation released c.mu to read a fragment; it starts
// again with the fragment cached, so every operation runs its checks
// and its change under one holding of the lock.
var errRetry = errors.New("mdcache: retry with the fragment cached")

// errWait: the operation waits for caps to be revoked and is answered
// later.
var errWait = errors.New("mdcache: waiting for caps")

var errNoEnt = syscall.ENOENT

// request is one metadata request being handled.
type request struct {
	ctx    context.Context
	client ClientID
	req    *wire.ClientRequest
	cr     cred
	rep    *wire.ClientReply
	reply  func(*wire.ClientReply)
	// lockDone is set by an op that took an inode's locks in the
	// locker (a setattr): Done is called once it is committed.
	lockIno locker.Ino
	lockID  locker.ReqID
	// post are answers to other requests this one unblocked (file
	// locks), sent after c.mu is released.
	post []func()
}

// Handle runs one metadata request from a client with an open session
// and calls reply once for a read or an error (Safe), and twice for a
// change (unsafe when applied in memory, then safe when journaled). It
// may be called from many goroutines at once.
func (c *Cache) Handle(ctx context.Context, client ClientID, req *wire.ClientRequest, reply func(*wire.ClientReply)) {
	r := &request{ctx: ctx, client: client, req: req, reply: reply,
		cr:  cred{uid: req.UID, gid: req.GID, groups: req.Groups},
		rep: &wire.ClientReply{Tid: req.Tid, Op: req.Op}}
	c.mu.Lock()
	c.stats.Requests++
	if c.answerCompleted(r) {
		return
	}
	c.run(r)
	c.evictIfDue()
}

// run runs r's operation (c.mu held; released on return).
func (c *Cache) run(r *request) {
	for {
		if c.failed != nil || c.closed {
			c.mu.Unlock()
			r.fail(syscall.EIO)
			return
		}
		t, err := c.dispatch(r)
		if errors.Is(err, errRetry) {
			continue
		}
		if errors.Is(err, errWait) {
			c.mu.Unlock()
			return
		}
		if err != nil && r.lockID != 0 {
			// Locks taken for a change that then failed its checks.
			c.doActions(c.lk.Done(r.lockIno, r.lockID, nil, c.cfg.Clock.Now()))
			r.lockID = 0
		}
		if err != nil {
			// A fragment object missing in a request's walk is damage
			// (a directory names it); replay's are removed ones.
			err = c.store.MissingFrag(err)
			if t != nil {
				// A change that failed after it was begun: not possible
				// by construction (ops check before they change).
				c.log.Error("operation failed after changing the cache", "op", r.req.Op, "err", err)
			}
			c.mu.Unlock()
			r.fail(err)
			return
		}
		if t == nil {
			c.stats.Replies++
			r.rep.Safe = true
			if leased(r.rep) {
				// Queued before c.mu goes, so no revocation of the
				// lease can overtake it (lease.go).
				r.reply(r.rep)
				c.mu.Unlock()
			} else {
				c.mu.Unlock()
				r.reply(r.rep)
			}
			for _, f := range r.post {
				f()
			}
			return
		}
		c.finishChange(r, t)
		return
	}
}

// finishChange journals t, answers unsafe, then safe once durable.
func (c *Cache) finishChange(r *request, t *txn) {
	t.ev.CreatedIno = mdtypes.Ino(r.rep.CreatedIno)
	if err := t.commit(); err != nil {
		c.mu.Unlock()
		r.fail(err)
		return
	}
	var acts []locker.Action
	if r.lockID != 0 {
		var attrs *locker.FileAttrs
		if ci := c.inodes[mdtypes.Ino(r.lockIno)]; ci != nil {
			attrs = &locker.FileAttrs{Size: ci.in.Size, Mtime: ci.in.Mtime.Go()}
		}
		acts = c.lk.Done(r.lockIno, r.lockID, attrs, c.cfg.Clock.Now())
	}
	c.leaseChangedDir(r, t)
	unsafe := *r.rep
	// Other clients' leases on what changed are revoked; the replies
	// wait for their acks (lease.go).
	gate := c.revokeLeases(t.leased, r.client)
	sendUnsafe := gate.send(func() { r.reply(&unsafe) })
	c.durable(func(err error) {
		if err != nil {
			r.fail(err)
			return
		}
		safe := *r.rep
		safe.Safe = true
		c.mu.Lock()
		c.stats.Replies++
		c.mu.Unlock()
		if len(t.after) == 0 {
			c.gatedReply(gate, func() { r.reply(&safe) })
			return
		}
		// What the change leaves to do once durable (a truncation's
		// data cut, a purge) is done before the safe reply, off the
		// journal's completion path: a client that waits for it (as
		// fsclient does for a truncation) writes nothing the cut could
		// still remove.
		go func() {
			for _, f := range t.after {
				f()
			}
			c.gatedReply(gate, func() { r.reply(&safe) })
		}()
	})
	c.mu.Unlock()
	c.doActions(acts)
	if sendUnsafe {
		r.reply(&unsafe)
	}
}

// leased reports whether a reply grants a lease.
func leased(rep *wire.ClientReply) bool {
	for i := range rep.Trace {
		if rep.Trace[i].LeaseMs > 0 {
			return true
		}
	}
	for i := range rep.Dir.Entries {
		if rep.Dir.Entries[i].LeaseMs > 0 {
			return true
		}
	}
	return false
}

// answerCompleted answers a change the journal says was applied
// already (a request resent after a failover). c.mu is held; it is
// released if the request was answered.
func (c *Cache) answerCompleted(r *request) bool {
	if !r.req.Op.IsWrite() && !(r.req.Op == wire.MetaOpen && r.req.OpFlags&syscall.O_TRUNC != 0) {
		return false
	}
	cr := c.completed[r.client]
	if cr == nil {
		return false
	}
	done, ok := cr.done[r.req.Tid]
	if !ok {
		return false
	}
	r.rep.Result, r.rep.CreatedIno, r.rep.Safe = done.result, uint64(done.createdIno), true
	if done.result == 0 {
		// The trace as the namespace is now, best effort.
		if steps, err := c.resolveCached(r, r.req.Path); err == nil {
			r.rep.Trace = steps
		}
	}
	c.mu.Unlock()
	r.reply(r.rep)
	return true
}

// fail answers r with err's errno.
func (r *request) fail(err error) {
	r.rep.Result = -int32(errnoOf(err))
	r.rep.Safe = true
	r.rep.Trace = nil
	r.reply(r.rep)
}

// errnoOf maps an error to the errno the client gets: a syscall.Errno
// as it is, anything else (RADOS, damage) as EIO.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

func (c *Cache) dispatch(r *request) (*txn, error) {
	switch r.req.Op {
	case wire.MetaLookup:
		return nil, c.opLookup(r)
	case wire.MetaGetattr, wire.MetaStatlite:
		return nil, c.opGetattr(r)
	case wire.MetaLookupIno:
		return nil, c.opLookupIno(r)
	case wire.MetaLookupParent:
		return nil, c.opLookupParent(r)
	case wire.MetaSetFileLock:
		return nil, c.opSetFileLock(r)
	case wire.MetaGetFileLock:
		return nil, c.opGetFileLock(r)
	case wire.MetaLazyIO:
		return nil, c.opLazyIO(r)
	case wire.MetaReaddir:
		return nil, c.opReaddir(r)
	case wire.MetaGetxattr:
		return nil, c.opGetxattr(r)
	case wire.MetaListxattr:
		return nil, c.opListxattr(r)
	case wire.MetaOpen:
		return c.opOpen(r)
	case wire.MetaCreate, wire.MetaMknod, wire.MetaMkdir, wire.MetaSymlink:
		return c.opCreate(r)
	case wire.MetaLink:
		return c.opLink(r)
	case wire.MetaUnlink, wire.MetaRmdir:
		return c.opUnlink(r)
	case wire.MetaRename:
		return c.opRename(r)
	case wire.MetaSetattr:
		return c.opSetattr(r)
	case wire.MetaSetxattr:
		return c.opSetxattr(r)
	case wire.MetaRmxattr:
		return c.opRmxattr(r)
	case wire.MetaSetLayout, wire.MetaSetDirLayout:
		return c.opSetLayout(r)
	}
	return nil, syscall.EOPNOTSUPP
}

// splitPath splits a relative path into its names, checking each:
// ENAMETOOLONG for a name above 255 bytes, EINVAL for NUL, "." or "..".
func splitPath(p string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(p, "/") {
		if n == "" {
			continue
		}
		if err := checkName(n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, nil
}

// checkName is a dentry name's errno: ENAMETOOLONG above 255 bytes,
// EINVAL for "", ".", "..", '/' or NUL.
func checkName(n string) error {
	switch {
	case len(n) > mdtypes.MaxNameLen:
		return syscall.ENAMETOOLONG
	case n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00"):
		return syscall.EINVAL
	}
	return nil
}

// step is one resolved name: the directory it is in, its dentry and the
// inode it leads to (nil: a negative dentry).
type step struct {
	dir  *cinode
	frag *cfrag
	name string
	d    *mdtypes.Dentry
	ci   *cinode
}

// walk resolves p from its base inode: the steps, the first being the
// base (no name). A missing last name gives a final step with ci nil;
// a missing name before it is ENOENT. Every directory passed needs
// search permission.
func (c *Cache) walk(r *request, p wire.FilePath) ([]step, error) {
	names, err := splitPath(p.Path)
	if err != nil {
		return nil, err
	}
	base := mdtypes.Ino(p.Ino)
	if base == 0 {
		base = mdtypes.RootIno
	}
	bci, err := c.inodeRetry(r, base)
	if err != nil {
		return nil, err
	}
	steps := []step{{ci: bci}}
	cur := bci
	for i, n := range names {
		if cur == nil {
			return nil, syscall.ENOENT
		}
		if !cur.in.IsDir() {
			return nil, syscall.ENOTDIR
		}
		if err := access(r.cr, cur.in, permX); err != nil {
			return nil, err
		}
		f, err := c.fragRetry(r, cur.in, n)
		if err != nil {
			return nil, err
		}
		s := step{dir: cur, frag: f, name: n, d: f.dentries[n]}
		if s.d != nil {
			if s.ci, err = c.dentryInode(r, s.d); err != nil {
				return nil, err
			}
		} else if i < len(names)-1 {
			return nil, syscall.ENOENT
		}
		steps = append(steps, s)
		cur = s.ci
	}
	return steps, nil
}

// resolveCached is walk for a reply's trace, ignoring errors.
func (c *Cache) resolveCached(r *request, p wire.FilePath) ([]wire.TraceStep, error) {
	steps, err := c.walk(r, p)
	if err != nil {
		return nil, err
	}
	return c.trace(r, steps), nil
}

// dentryInode is the inode a dentry leads to (a remote one's: loaded by
// number if needed).
func (c *Cache) dentryInode(r *request, d *mdtypes.Dentry) (*cinode, error) {
	if d.Inode != nil {
		return c.inodes[d.Inode.Ino], nil
	}
	return c.inodeRetry(r, d.RemoteIno)
}

// inodeRetry returns a cached inode or loads it and asks for a retry.
func (c *Cache) inodeRetry(r *request, ino mdtypes.Ino) (*cinode, error) {
	if ci := c.inodes[ino]; ci != nil {
		return ci, nil
	}
	if mdtypes.IsBase(ino) {
		return nil, syscall.ESTALE
	}
	if _, err := c.inode(r.ctx, ino); err != nil {
		return nil, err
	}
	return nil, errRetry
}

// fragRetry returns dir's fragment holding name, or loads it and asks
// for a retry.
func (c *Cache) fragRetry(r *request, dir *mdtypes.Inode, name string) (*cfrag, error) {
	fr, err := mdtypes.FragOf(dir.Frags, name)
	if err != nil {
		return nil, err
	}
	k := fragKey{dir.Ino, fr}
	if f := c.frags[k]; f != nil {
		c.lruTouch(f)
		return f, nil
	}
	if _, err := c.loadFrag(r.ctx, k); err != nil {
		return nil, err
	}
	return nil, errRetry
}

// target resolves p to an existing inode (ENOENT if it is not there).
func (c *Cache) target(r *request, p wire.FilePath) ([]step, *cinode, error) {
	steps, err := c.walk(r, p)
	if err != nil {
		return nil, nil, err
	}
	last := steps[len(steps)-1]
	if last.ci == nil {
		return nil, nil, syscall.ENOENT
	}
	return steps, last.ci, nil
}

// parentOf resolves p's directory and checks its last name (which must
// be there): the steps to the directory, its fragment for the name, and
// the name's dentry (nil if absent).
func (c *Cache) parentOf(r *request, p wire.FilePath) (steps []step, last step, err error) {
	names, err := splitPath(p.Path)
	if err != nil {
		return nil, step{}, err
	}
	if len(names) == 0 {
		return nil, step{}, syscall.EINVAL
	}
	steps, err = c.walk(r, p)
	if err != nil {
		return nil, step{}, err
	}
	return steps[:len(steps)-1], steps[len(steps)-1], nil
}

// trace converts steps into a reply's trace.
func (c *Cache) trace(r *request, steps []step) []wire.TraceStep {
	out := make([]wire.TraceStep, 0, len(steps))
	for _, s := range steps {
		ts := wire.TraceStep{Name: s.name}
		if s.ci != nil {
			ts.Inode = c.stat(r.client, s.ci.in)
		}
		out = append(out, ts)
	}
	return out
}

// stat converts an inode to the wire, with client's cap on it.
func (c *Cache) stat(client ClientID, in *mdtypes.Inode) wire.InodeStat {
	s := wire.InodeStat{Ino: uint64(in.Ino), Version: in.Version, ChangeAttr: in.Version, Mode: in.Mode,
		UID: in.UID, GID: in.GID, Nlink: in.Nlink, Size: in.Size, Rdev: in.Rdev,
		Atime: fsTime(in.Atime), Mtime: fsTime(in.Mtime), Ctime: fsTime(in.Ctime), Btime: fsTime(in.Btime),
		Symlink: in.Symlink, XattrVersion: in.Version,
		RBytes: in.RStat.Bytes, RFiles: in.RStat.Files, RSubdirs: in.RStat.Subdirs,
		QuotaMaxBytes: in.Quota.MaxBytes, QuotaMaxFiles: in.Quota.MaxFiles}
	if in.Layout != nil {
		s.Layout = wireLayout(*in.Layout)
		if in.IsRegular() {
			s.MaxSize = in.Size + 4*uint64(in.Layout.ObjectSize)
		}
	}
	if in.IsDir() {
		for _, f := range in.Leaves() {
			if cf := c.frags[fragKey{in.Ino, f}]; cf != nil {
				s.Files += cf.hdr.Files
				s.Subdirs += cf.hdr.Subdirs
			}
		}
	}
	if cp, ok := c.lk.Cap(locker.Ino(in.Ino), locker.ClientID(client)); ok {
		s.Cap = wire.InodeCap{ID: cp.ID, Seq: cp.Seq, IssueSeq: cp.IssueSeq, Caps: uint32(cp.Issued),
			Wanted: uint32(cp.Wanted), Rank: int32(c.cfg.Rank), Lazy: cp.Lazy}
	}
	return s
}

func fsTime(t mdtypes.Time) wire.FSTime { return wire.FSTime{Sec: t.Sec, Nsec: t.Nsec} }

func mdTime(t wire.FSTime) mdtypes.Time { return mdtypes.Time{Sec: t.Sec, Nsec: t.Nsec % 1e9} }

func wireLayout(l layout.Layout) wire.FSLayout {
	return wire.FSLayout{ObjectSize: l.ObjectSize, StripeUnit: l.StripeUnit, StripeCount: l.StripeCount,
		Pool: l.Pool, PoolNamespace: l.Namespace}
}

func (c *Cache) now() mdtypes.Time { return mdtypes.TimeOf(c.cfg.Clock.Now()) }
