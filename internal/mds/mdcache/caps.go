package mdcache

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Caps through internal/mds/locker: the engine turns requests and cap
// messages into the locker's events and carries out its actions. Outbox
// calls are made with c.mu held: the daemon queues them (Outbox).

// waiter is a request waiting for the locker (a stat collecting size
// and mtime from writers).
type waiter struct {
	r *request
}

// openCaps opens ci for r's client in the mode of flags: the cap issued
// now goes with the reply's trace (stat reads it); revocations of other
// clients' conflicting caps go out as actions.
func (c *Cache) openCaps(r *request, ci *cinode, flags uint32) {
	if !ci.in.IsRegular() {
		return
	}
	var mode locker.OpenMode
	switch flags & syscall.O_ACCMODE {
	case syscall.O_RDONLY:
		mode = locker.OpenRead
	case syscall.O_WRONLY:
		mode = locker.OpenWrite
	default:
		mode = locker.OpenRead | locker.OpenWrite
	}
	if locker.Caps(r.req.WantCaps)&locker.FileLazy != 0 {
		mode |= locker.OpenLazy // O_LAZY: the client wants Fl
	}
	ino := locker.Ino(ci.in.Ino)
	if len(c.lk.Clients(ino)) == 0 {
		c.lk.Load(ino, locker.FileAttrs{Size: ci.in.Size, Mtime: ci.in.Mtime.Go()})
	}
	c.reqSeq++
	acts := c.lk.Open(c.reqSeq, locker.ClientID(r.client), ino, mode, c.cfg.Clock.Now())
	c.doActions(acts)
}

// opLazyIO turns lazy I/O on (OpFlags 1: the client's cap wants Fl,
// as an O_LAZY open) or off (0) for the client's open file.
func (c *Cache) opLazyIO(r *request) error {
	_, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return err
	}
	if !ci.in.IsRegular() {
		return syscall.EINVAL
	}
	ino, cl := locker.Ino(ci.in.Ino), locker.ClientID(r.client)
	cp, ok := c.lk.Cap(ino, cl)
	if !ok {
		return syscall.EBADF // lazy I/O is for a file the client has open
	}
	now := c.cfg.Clock.Now()
	var acts []locker.Action
	if r.req.OpFlags&1 != 0 {
		c.reqSeq++
		acts = c.lk.Open(c.reqSeq, cl, ino, locker.OpenLazy, now)
	} else {
		acts = c.lk.Want(cl, ino, cp.ID, cp.IssueSeq, cp.Wanted&^locker.FileLazy, nil, now)
	}
	c.doActions(acts)
	r.rep.Trace = []wire.TraceStep{{Inode: c.stat(r.client, ci.in)}}
	return nil
}

// statNeedsWriters asks the locker for a stat of a file other clients
// hold caps on: their buffered size and mtime come back first. It
// reports waiting (errWait) when the answer comes later.
func (c *Cache) statNeedsWriters(r *request, ci *cinode) (bool, error) {
	if !ci.in.IsRegular() || r.lockID != 0 {
		return false, nil
	}
	ino := locker.Ino(ci.in.Ino)
	if len(c.lk.Clients(ino)) == 0 {
		return false, nil
	}
	fields := locker.FieldsAll
	if r.req.Op == wire.MetaStatlite {
		fields = 0
		if r.req.Mask&wire.AttrSize != 0 {
			fields |= locker.FieldSize
		}
		if r.req.Mask&wire.AttrMtime != 0 {
			fields |= locker.FieldMtime
		}
		if fields == 0 {
			r.rep.Approx = wire.AttrSize | wire.AttrMtime
			return false, nil
		}
	}
	c.reqSeq++
	r.lockID, r.lockIno = c.reqSeq, ino
	acts := c.lk.Request(locker.Request{ID: r.lockID, Client: locker.ClientID(r.client), Ino: ino, Op: locker.OpStat, Fields: fields}, c.cfg.Clock.Now())
	c.waits[r.lockID] = &waiter{r: r}
	resumed := c.doActions(acts)
	for _, w := range resumed {
		if w.r == r {
			return false, nil
		}
	}
	return true, errWait
}

// setattrNeedsLocks takes the locks a setattr of fields needs on a file
// clients hold caps on: their caps covering the fields are revoked first
// (a writer's buffered size before a truncate). It reports waiting
// (errWait) when the locks come later; the request runs again then, and
// Done releases them once the change is committed (finishChange), or
// when it fails (run).
func (c *Cache) setattrNeedsLocks(r *request, ci *cinode, fields locker.Field) error {
	if !ci.in.IsRegular() || r.lockID != 0 || fields == 0 {
		return nil
	}
	ino := locker.Ino(ci.in.Ino)
	if len(c.lk.Clients(ino)) == 0 {
		return nil
	}
	c.reqSeq++
	r.lockID, r.lockIno = c.reqSeq, ino
	acts := c.lk.Request(locker.Request{ID: r.lockID, Client: locker.ClientID(r.client), Ino: ino, Op: locker.OpSetattr, Fields: fields}, c.cfg.Clock.Now())
	c.waits[r.lockID] = &waiter{r: r}
	for _, w := range c.doActions(acts) {
		if w.r == r {
			return nil
		}
	}
	return errWait
}

// setattrFields are the locker's fields a setattr mask changes.
func setattrFields(mask uint32) locker.Field {
	var f locker.Field
	if mask&wire.AttrMode != 0 {
		f |= locker.FieldMode
	}
	if mask&(wire.AttrUID|wire.AttrGID) != 0 {
		f |= locker.FieldOwner
	}
	if mask&wire.AttrSize != 0 {
		f |= locker.FieldSize | locker.FieldMtime
	}
	if mask&(wire.AttrMtime|wire.AttrMtimeNow) != 0 {
		f |= locker.FieldMtime
	}
	if mask&(wire.AttrAtime|wire.AttrAtimeNow) != 0 {
		f |= locker.FieldAtime
	}
	return f
}

// doActions carries out the locker's actions and returns the waiting
// requests they resumed (the caller runs them).
func (c *Cache) doActions(acts []locker.Action) []*waiter {
	var resumed []*waiter
	for _, a := range acts {
		client := ClientID(a.Client)
		switch a.Kind {
		case locker.ActionGrant, locker.ActionRevoke:
			m := c.capMessage(a)
			if a.Kind == locker.ActionGrant {
				m.Op = wire.CapGrant
			} else {
				m.Op = wire.CapRevoke
			}
			c.cfg.Outbox.SendCaps(client, m)
		case locker.ActionFlushAck:
			c.applyFlushAck(a)
		case locker.ActionReply:
			if w := c.waits[a.Req]; w != nil {
				delete(c.waits, a.Req)
				resumed = append(resumed, w)
			}
		case locker.ActionLaggy:
			c.log.Warn("client failing to respond to capability release", "client", a.Client, "ino", a.Ino, "revoking", a.Revoking.String(), "since", a.Since)
		case locker.ActionDropClient:
			if a.Blocklist {
				c.cfg.Outbox.Fence(client, "did not release capabilities in time, or its session ended while it could write")
			}
		}
	}
	return resumed
}

// capMessage is a cap message for action a with the inode's attributes.
func (c *Cache) capMessage(a locker.Action) *wire.ClientCaps {
	m := &wire.ClientCaps{Ino: uint64(a.Ino), CapID: a.CapID, Rank: int32(c.cfg.Rank), Seq: a.Seq,
		IssueSeq: a.IssueSeq, Caps: uint32(a.Caps), Size: a.Attrs.Size, Mtime: wire.FSTimeOf(a.Attrs.Mtime)}
	if cp, ok := c.lk.Cap(a.Ino, a.Client); ok {
		m.Wanted, m.Lazy = uint32(cp.Wanted), cp.Lazy
		// The attributes include every flush of the client's up to
		// this one: it may take them over the ones it reported.
		m.FlushTID = cp.LastFlushTID
	}
	if ci := c.inodes[mdtypes.Ino(a.Ino)]; ci != nil {
		in := ci.in
		m.Mode, m.UID, m.GID, m.Nlink = in.Mode, in.UID, in.GID, in.Nlink
		m.Atime, m.Ctime, m.Btime = fsTime(in.Atime), fsTime(in.Ctime), fsTime(in.Btime)
		m.ChangeAttr, m.XattrVersion = in.Version, in.Version
		if in.Layout != nil {
			m.Layout = wireLayout(*in.Layout)
			m.MaxSize = max(a.Attrs.Size, in.Size) + 4*uint64(in.Layout.ObjectSize)
		}
	}
	return m
}

// applyFlushAck journals the size and mtime a client flushed and acks
// the flush once they are durable.
func (c *Cache) applyFlushAck(a locker.Action) {
	ci := c.inodes[mdtypes.Ino(a.Ino)]
	if ci == nil {
		return
	}
	t := c.newTxn(0, 0, 0, 0)
	if a.Attrs.Size != ci.in.Size {
		old := ci.in.Size
		ci.in.Size = a.Attrs.Size
		c.addRStat(t, c.parentDir(ci), int64(a.Attrs.Size)-int64(old), 0, 0)
	}
	if mt := mdtypes.TimeOf(a.Attrs.Mtime); !a.Attrs.Mtime.IsZero() && ci.in.Mtime.Before(mt) {
		ci.in.Mtime, ci.in.Ctime = mt, mt
	}
	t.dirtyInode(ci)
	if err := t.commit(); err != nil {
		c.log.Error("journaling a cap flush failed", "ino", a.Ino, "err", err)
		return
	}
	m := c.capMessage(a)
	m.Op, m.FlushTID = wire.CapFlushAck, a.TID
	client := ClientID(a.Client)
	c.durable(func(err error) {
		if err == nil {
			c.cfg.Outbox.SendCaps(client, m)
		}
	})
}

// HandleCaps takes a client's cap message (ack, flush, release, update
// of wanted caps).
func (c *Cache) HandleCaps(ctx context.Context, client ClientID, m *wire.ClientCaps) {
	c.mu.Lock()
	now := c.cfg.Clock.Now()
	ino, cl := locker.Ino(m.Ino), locker.ClientID(client)
	var flush *locker.Flush
	if m.Dirty != 0 {
		flush = &locker.Flush{TID: m.FlushTID, Size: m.Size, Mtime: m.Mtime.Time(), Dirty: locker.Caps(m.Dirty)}
	}
	var acts []locker.Action
	switch m.Op {
	case wire.CapUpdate:
		acts = c.lk.Want(cl, ino, m.CapID, m.IssueSeq, locker.Caps(m.Wanted), flush, now)
	case wire.CapFlush:
		if cp, ok := c.lk.Cap(ino, cl); ok {
			acts = c.lk.Want(cl, ino, m.CapID, m.IssueSeq, cp.Wanted, flush, now)
		}
	case wire.CapAck:
		acts = c.lk.Ack(cl, ino, m.CapID, m.Seq, flush, now)
	case wire.CapRelease:
		acts = c.lk.Release(cl, ino, m.CapID, m.IssueSeq, flush, now)
	default:
		c.log.Debug("cap message ignored", "client", client, "op", m.Op.String())
	}
	c.finishActions(ctx, acts)
	if m.Op == wire.CapRelease {
		c.maybePurge(mdtypes.Ino(m.Ino))
	}
}

// finishActions carries out acts, releases c.mu and runs the requests
// they resumed.
func (c *Cache) finishActions(ctx context.Context, acts []locker.Action) {
	resumed := c.doActions(acts)
	c.mu.Unlock()
	for _, w := range resumed {
		c.mu.Lock()
		c.run(w.r)
	}
	c.evictIfDue()
}

// SessionOpened records a client's new session.
func (c *Cache) SessionOpened(client ClientID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reconnected[client] = true
}

// SessionEnded drops the client's caps (and asks for it to be fenced if
// it could write); its unlinked open files may then be purged.
func (c *Cache) SessionEnded(client ClientID, reason locker.EndReason) {
	c.mu.Lock()
	inos := c.capInos(client)
	acts := c.lk.SessionEnd(locker.ClientID(client), reason, c.cfg.Clock.Now())
	for id, w := range c.waits {
		if w.r.client == client {
			delete(c.waits, id)
		}
	}
	delete(c.reconnected, client)
	// The session is over: its requests will not be resent.
	delete(c.completed, client)
	if reason == locker.EndClosed {
		c.dropLeases(client)
	}
	answers := c.locks.dropClient(client)
	c.finishActions(context.Background(), acts)
	for _, f := range answers {
		f()
	}
	for _, ino := range inos {
		c.maybePurge(ino)
	}
}

// Fenced tells the engine the OSDs now refuse client's writes (the
// blocklist Outbox.Fence asked for is in their map): the caps it held
// stop blocking others.
func (c *Cache) Fenced(client ClientID) {
	c.mu.Lock()
	inos := c.capInos(client)
	acts := c.lk.Fenced(locker.ClientID(client), c.cfg.Clock.Now())
	c.finishActions(context.Background(), acts)
	for _, ino := range inos {
		c.maybePurge(ino)
	}
}

// capInos are the stray inodes client holds caps on (purge candidates).
func (c *Cache) capInos(client ClientID) []mdtypes.Ino {
	var out []mdtypes.Ino
	for ino, ci := range c.inodes {
		if ci.stray {
			if _, ok := c.lk.Cap(locker.Ino(ino), locker.ClientID(client)); ok {
				out = append(out, ino)
			}
		}
	}
	return out
}

// Reconnect takes a client's report after a takeover: its caps (on
// inodes found in the cache, or by number through their backtraces)
// are re-established as it reports them.
func (c *Cache) Reconnect(client ClientID, m *wire.ClientReconnect) error {
	ctx := context.Background()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reconnected[client] = true
	now := c.cfg.Clock.Now()
	var errs int
	for _, rc := range m.Caps {
		ino := mdtypes.Ino(rc.Ino)
		if _, err := c.inode(ctx, ino); err != nil {
			errs++
			continue
		}
		var flush *locker.Flush
		if rc.Dirty != 0 {
			flush = &locker.Flush{TID: rc.FlushTID, Size: rc.Size, Mtime: rc.Mtime.Time(), Dirty: locker.Caps(rc.Dirty)}
		}
		acts, err := c.lk.Reconnect(locker.ClientID(client), locker.Ino(ino), locker.ReconnectCap{CapID: rc.CapID,
			Seq: rc.Seq, IssueSeq: rc.IssueSeq, Issued: locker.Caps(rc.Issued), Wanted: locker.Caps(rc.Wanted),
			Lazy: rc.Lazy, Flush: flush}, now)
		if err != nil {
			errs++
			continue
		}
		c.doActions(acts)
	}
	for _, rl := range m.Locks {
		if c.inodes[mdtypes.Ino(rl.Ino)] != nil {
			c.locks.inode(mdtypes.Ino(rl.Ino)).set(lockOf(client, rl.Lock))
		}
	}
	if errs > 0 {
		return fmt.Errorf("mdcache: reconnect of client.%d: %d of %d caps not re-established (inode gone, or a conflicting cap) (ESTALE)", client, errs, len(m.Caps))
	}
	return nil
}

// Resume ends the reconnect phase: the caps are brought to a consistent
// state, clients that made changes before the takeover and did not
// reconnect are fenced, and the strays without caps are purged.
func (c *Cache) Resume() {
	c.mu.Lock()
	for client := range c.completed {
		if !c.reconnected[client] {
			c.cfg.Outbox.Fence(client, "did not reconnect after the MDS took over")
		}
	}
	c.resumed = true
	acts := c.lk.Resume(c.cfg.Clock.Now())
	var strays []mdtypes.Ino
	for ino, ci := range c.inodes {
		if ci.stray && !ci.in.IsDir() {
			strays = append(strays, ino)
		}
	}
	c.finishReplayedTruncs()
	c.finishActions(context.Background(), acts)
	for _, ino := range strays {
		c.maybePurge(ino)
	}
}

// Tick runs the caps' timeouts and, every WriteBackEvery or when the
// journal grows past WriteBackBytes, a write-back round in the
// background.
func (c *Cache) Tick(now time.Time) {
	c.mu.Lock()
	if len(c.inodes) > c.cfg.CacheInodes {
		// Fragments written back since the last eviction may go now.
		c.evict()
	}
	c.retryTruncs()
	c.expireLeases(now)
	acts := c.lk.Tick(now)
	due := now.UnixNano()-c.lastWB >= int64(c.cfg.WriteBackEvery) ||
		c.jw.WritePos()-c.jw.Header().ExpirePos >= c.cfg.WriteBackBytes
	start := due && !c.wbRunning && !c.closed
	if start {
		c.wbRunning = true
		c.lastWB = now.UnixNano()
	}
	c.finishActions(context.Background(), acts)
	if start {
		go func() {
			if err := c.WriteBack(context.Background()); err != nil {
				c.log.Warn("write-back failed; retrying at the next tick", "err", err)
			}
			c.mu.Lock()
			c.wbRunning = false
			c.mu.Unlock()
		}()
	}
}

// Stats returns the engine's counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Inodes, s.Frags = len(c.inodes), len(c.frags)
	_, s.Damaged = c.store.Damage()
	for _, f := range c.frags {
		s.Dentries += len(f.dentries)
		if f.isDirty() {
			s.DirtyFrags++
		}
	}
	for _, ci := range c.inodes {
		if ci.stray && !ci.in.IsDir() {
			s.Strays++
		}
	}
	for _, ino := range c.lk.Inodes() {
		s.Caps += len(c.lk.Clients(ino))
	}
	for _, hs := range c.leases {
		s.Leases += len(hs)
	}
	s.JournalBytes = c.jw.WritePos() - c.jw.Header().ExpirePos
	return s
}

// Close stops serving, flushes the journal and writes back everything
// dirty.
func (c *Cache) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.WriteBack(ctx)
}
