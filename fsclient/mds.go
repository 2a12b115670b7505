package fsclient

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/cuttlestore/cuttle/fsclient/internal/captab"
	"github.com/cuttlestore/cuttle/fsclient/internal/session"
	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// The driver of the pure cores: it feeds them the MDS's messages, the
// messenger's events, the MDS map and the time, and carries their
// actions out. Everything below runs with Client.mu held unless said
// otherwise; sends only queue (msgr.Session.Send does not wait for the
// peer).

// call is a request waiting for its reply.
type call struct {
	done    chan struct{} // closed at the first reply or the failure
	replied bool          // done is closed
	safe    chan struct{} // closed when journaled (or failed)
	reply   *wire.ClientReply
	// err: why it failed before its first reply (set before done is
	// closed); safeErr: why it failed before it was journaled (set
	// before safe is closed).
	err, safeErr error
	req          *wire.ClientRequest
	// sent is when the request was first submitted: its reply's leases
	// run from then (the MDS's from later).
	sent time.Time
}

// flushVal is what a cap flush reported, to mark the file's attributes
// clean when it is acked.
type flushVal struct{ gen uint64 }

// Dispatch implements msgr.Dispatcher for the MDS messenger.
func (c *Client) Dispatch(from msgr.Peer, msg msgr.Message) {
	defer c.ms.Release(msg)
	c.mu.Lock()
	defer c.mu.Unlock()
	if from.Session != c.mdsConn {
		return // from a session to a previous holder
	}
	now := c.clock.Now()
	var err error
	switch msg.Type {
	case wire.TypeClientSession:
		var m wire.ClientSession
		if m, err = wire.DecodeClientSession(msg.Payload); err == nil {
			c.sess.SessionMsg(m, now)
		}
	case wire.TypeClientReply:
		var m *wire.ClientReply
		if m, err = wire.DecodeClientReply(msg.Payload); err == nil {
			c.sess.Reply(m)
		}
	case wire.TypeClientRequestForward:
		var m wire.ClientRequestForward
		if m, err = wire.DecodeClientRequestForward(msg.Payload); err == nil {
			c.sess.Forward(m)
		}
	case wire.TypeClientCaps:
		var m *wire.ClientCaps
		if m, err = wire.DecodeClientCaps(msg.Payload); err == nil {
			c.caps.Handle(m)
		}
	case wire.TypeClientLease:
		var m wire.ClientLease
		if m, err = wire.DecodeClientLease(msg.Payload); err == nil && m.Op == wire.LeaseRevoke {
			c.leaseRevoked(m)
		}
	default:
		err = fmt.Errorf("unexpected message type %d", msg.Type)
	}
	if err != nil {
		c.log.Warn("dropping a bad message from the MDS", "peer", from.Name.String(), "type", msg.Type, "err", err)
		return
	}
	c.runLocked()
}

// HandleEvent implements msgr.Dispatcher: the loss of the session to the
// holder makes the client connect and open again.
func (c *Client) HandleEvent(ev msgr.Event) {
	if ev.Kind != msgr.EventFailed && ev.Kind != msgr.EventReset {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Session != c.mdsConn || c.mdsConn == nil {
		return
	}
	c.log.Debug("lost the connection to the MDS", "peer", ev.Peer.String(), "err", ev.Err)
	c.mdsConn = nil
	c.sess.ConnectionLost(c.clock.Now())
	c.runLocked()
	c.pollNow()
}

// send queues msg to the holder (dropped without a connection: the
// session machine resends what matters after the next connect).
func (c *Client) send(msg msgr.Message) {
	if c.mdsConn == nil {
		return
	}
	if err := c.mdsConn.Send(context.Background(), msg); err != nil {
		c.log.Debug("send to the MDS", "type", msg.Type, "err", err)
	}
}

// runLocked carries out the actions of both cores until none are left.
func (c *Client) runLocked() {
	for {
		sa, ca := c.sess.Take(), c.caps.Take()
		if len(sa) == 0 && len(ca) == 0 {
			return
		}
		for _, a := range sa {
			c.sessionAction(a)
		}
		for _, a := range ca {
			c.capAction(a)
		}
	}
}

func (c *Client) sessionAction(a session.Action) {
	switch a.Kind {
	case session.Connect:
		peer := auth.EntityName{Type: "mds", ID: a.Name}
		if c.mdsConn != nil && peer != c.mdsPeer {
			c.ms.MarkDown(c.mdsPeer)
		}
		s, err := c.ms.Connect(peer, a.Addr)
		if err != nil {
			c.log.Warn("connect to the MDS", "peer", peer.String(), "addr", a.Addr, "err", err)
			c.mdsConn = nil
			return
		}
		c.mdsPeer, c.mdsConn = peer, s
	case session.SendSession:
		c.send(msgr.Message{Type: wire.TypeClientSession, Version: 1, Payload: a.Session.Encode()})
	case session.SendRequest:
		c.send(msgr.Message{Type: wire.TypeClientRequest, Version: 1, Payload: a.Request.Encode()})
	case session.SendReconnect:
		// The new holder of the rank knows none of the old one's
		// leases: stop trusting them, and make the kernel stop too.
		c.dropAllLeases()
		m := c.caps.Reconnect()
		for i := range m.Caps {
			rc := &m.Caps[i]
			in := c.inodes[rc.Ino]
			switch {
			case in == nil || rc.Dirty == 0:
			case in.data != nil:
				size, mtime, _, _ := in.data.DirtyAttrs()
				rc.Size, rc.Mtime = size, wire.FSTimeOf(mtime)
			default: // closed since: its last size and mtime are the inode's
				rc.Size, rc.Mtime = in.stat.Size, in.stat.Mtime
			}
		}
		m.Locks = c.heldLocks()
		c.send(msgr.Message{Type: wire.TypeClientReconnect, Version: 1, Payload: m.Encode()})
	case session.RequestDone:
		w := c.calls[a.Tid]
		sent := c.clock.Now()
		if w != nil {
			sent = w.sent
			if w.req.Op.IsWrite() {
				// Leases read before this change may have reached
				// the client since it was sent: what it changed is
				// not trusted past here (its own reply re-leases).
				c.dropLeasesFor(w.req)
			}
		}
		c.absorb(a.Reply, sent)
		if w != nil && !w.replied {
			w.reply, w.replied = a.Reply, true
			close(w.done)
		}
	case session.RequestSafe:
		if w := c.calls[a.Tid]; w != nil {
			close(w.safe)
			delete(c.calls, a.Tid)
		}
	case session.RequestFailed:
		if w := c.calls[a.Tid]; w != nil {
			// It may have had its first (unsafe) reply already: then
			// only the wait for safe ends, with the error.
			if !w.replied {
				w.err, w.replied = a.Err, true
				close(w.done)
			}
			w.safeErr = a.Err
			close(w.safe)
			delete(c.calls, a.Tid)
		}
	case session.CapsStale, session.CapsRenewed:
		c.broadcast()
	case session.CapsLost:
		c.caps.Lost()
		c.dropAllLeases()
	case session.RecallCaps:
		c.caps.Recall(a.MaxCaps)
	case session.FlushCaps:
		for ino := range c.inodes {
			c.caps.Flush(ino)
		}
	case session.SessionEnded:
		c.ended = a.Err
		c.broadcast()
	}
}

func (c *Client) capAction(a captab.Action) {
	in := c.inodes[a.Ino]
	switch a.Kind {
	case captab.Send:
		m := a.Msg
		if m.Dirty != 0 && in != nil && in.data != nil {
			size, mtime, _, gen := in.data.DirtyAttrs()
			m.Size, m.Mtime = size, wire.FSTimeOf(mtime)
			c.flushVals[m.FlushTID] = flushVal{gen: gen}
			in.data.FlushSent(m.FlushTID, gen)
			// The cached attributes are the client's own now.
			in.stat.Size, in.stat.Mtime = size, m.Mtime
		} else if m.Dirty != 0 && in != nil {
			m.Size, m.Mtime = in.stat.Size, in.stat.Mtime
		}
		c.send(msgr.Message{Type: wire.TypeClientCaps, Version: 1, Payload: m.Encode()})
	case captab.Revoke:
		// Stop using the bits and write back what they covered, off
		// the lock (it is OSD I/O), then ack.
		var data *fileData
		if in != nil {
			data = in.data
			if a.Msg != nil {
				// A grant that still takes a bit: its attributes
				// count as a grant's.
				c.takeAttrs(a.Ino, in, a.Msg)
			}
		}
		_, lazy := c.caps.Issued(a.Ino)
		var inval func(uint64)
		if cp := c.caps.Get(a.Ino); cp != nil && (cp.Implemented&^a.Caps)&kernelCachedCaps != 0 && in != nil && in.kernelKeeps(c.clock.Now()) {
			// The kernel keeps attributes it was given under the
			// bits taken: it drops them before the ack. Only then: an
			// invalidation makes the kernel drop the reply of a getattr
			// in flight (the very one a revocation of a writer's Fw
			// and Fb serves, to collect its size), which keeps a stale
			// size in the kernel's inode while stat shows the new one.
			inval = c.inval.Inode
			in.kernelUntil = time.Time{}
		}
		c.wg.Add(1)
		go c.revoke(data, a.Ino, a.Caps, lazy, a.Seq, inval)
	case captab.Changed:
		if in != nil {
			if a.Msg != nil {
				c.takeAttrs(a.Ino, in, a.Msg)
			}
			if in.data != nil {
				_, lazy := c.caps.Issued(a.Ino)
				in.data.setCaps(a.Caps, lazy) // caps that grow: nothing to write back
			}
		}
		c.broadcast()
	case captab.FlushAcked:
		if v, ok := c.flushVals[a.FlushTID]; ok {
			delete(c.flushVals, a.FlushTID)
			if in != nil && in.data != nil {
				in.data.AttrsFlushed(v.gen)
			}
		}
		c.broadcast()
	case captab.Dropped:
		if inv := c.inval.Inode; inv != nil && in != nil && in.kernelKeeps(c.clock.Now()) {
			// The kernel was given attributes under this cap, for a
			// time that has not run out.
			in.kernelUntil = time.Time{}
			c.wg.Add(1)
			go func() { defer c.wg.Done(); inv(a.Ino) }()
		}
		if in != nil {
			if in.data != nil {
				in.data.DropCache()
			}
			if in.opens == 0 {
				delete(c.inodes, a.Ino)
			}
		}
		c.broadcast()
	}
}

// takeAttrs takes the size and mtime of a cap message from the MDS (a
// grant, or a revocation that grants too) into ino's cached attributes
// and its open file's data, and tells the kernel when they change what
// it may still be keeping. c.mu is held.
func (c *Client) takeAttrs(ino uint64, in *inode, m *wire.ClientCaps) {
	oldSize, oldMtime := in.stat.Size, in.stat.Mtime.Time()
	if in.data != nil {
		oldSize, oldMtime, _, _ = in.data.DirtyAttrs()
	}
	in.stat.Size, in.stat.Mtime = m.Size, m.Mtime
	in.stat.MaxSize = m.MaxSize
	newSize, newMtime := m.Size, m.Mtime.Time()
	if in.data != nil {
		in.data.SetMDSAttr(m.Size, m.Mtime.Time(), m.FlushTID)
		newSize, newMtime, _, _ = in.data.DirtyAttrs()
	}
	if newSize == oldSize && newMtime.Equal(oldMtime) {
		return
	}
	c.attrsChanged(ino, in, oldSize, newSize)
}

// attrsChanged tells the kernel that ino's size or mtime changed under
// attributes it may still be keeping (it asks again at their next use,
// and drops its cached pages then if they changed), and when the file
// shrank, drops its pages past the new end. c.mu is held.
//
// Nothing is sent when the kernel keeps nothing (it was given the
// attributes for no time, or was told since): an invalidation makes the
// kernel drop the reply of a getattr in flight, and the size the
// program sees in that reply would then differ from the one the kernel
// keeps (a mapping of the pages between faults).
func (c *Client) attrsChanged(ino uint64, in *inode, oldSize, newSize uint64) {
	if !in.kernelKeeps(c.clock.Now()) {
		return
	}
	in.kernelUntil = time.Time{}
	inv := c.inval
	if inv.Inode != nil {
		c.wg.Add(1)
		go func() { defer c.wg.Done(); inv.Inode(ino) }()
	}
	if newSize < oldSize && inv.Data != nil {
		// It may wait for the kernel's reads of those pages, which may
		// wait for caps: nothing waits for it (Close neither).
		go inv.Data(ino, int64(newSize))
	}
}

// kernelCachedCaps are the bits under which a mount's kernel keeps what
// it was given: attributes (kernelStat, walk.go) and file pages.
const kernelCachedCaps = cachedStatCaps | locker.AuthExcl | locker.LinkExcl | locker.FileShared | locker.FileExcl |
	locker.FileCache | locker.FileLazy

// revoke runs a revocation's data work without the lock, makes the
// kernel drop what it cached under the caps (inval), then acks.
func (c *Client) revoke(data *fileData, ino uint64, caps locker.Caps, lazy bool, seq uint64, inval func(uint64)) {
	defer c.wg.Done()
	if inval != nil {
		inval(ino)
	}
	if data != nil {
		for {
			err := data.SetCaps(c.runCtx, caps, lazy)
			if err == nil {
				break
			}
			// The write-back failed (an OSD error): the MDS waits for
			// the ack, and fences this client if it never comes.
			c.log.Warn("write-back for a revocation failed; retrying", "ino", fmt.Sprintf("%#x", ino), "err", err)
			select {
			case <-c.stop:
				return
			case <-c.clock.NewTimer(time.Second).C():
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.caps.RevokeDone(ino, seq)
	if data != nil {
		// A grant may have come while this write-back ran, its caps
		// set before ours: the data layer follows the table.
		issued, lazy := c.caps.Issued(ino)
		data.setCaps(issued, lazy)
	}
	c.runLocked()
	c.broadcast()
}

// broadcast wakes everyone waiting for caps or flushes.
func (c *Client) broadcast() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// absorb takes a reply's inodes into the caches and the cap table, and
// the leases it grants (counted from sent, when the request went out).
func (c *Client) absorb(r *wire.ClientReply, sent time.Time) {
	var dir uint64
	for i := range r.Trace {
		st := &r.Trace[i]
		until := sent.Add(time.Duration(st.LeaseMs) * time.Millisecond)
		if i > 0 && st.Name != "" && dir != 0 {
			if st.LeaseMs > 0 {
				c.dentries[dentryKey{dir, st.Name}] = dentry{ino: st.Inode.Ino, until: until}
			} else {
				delete(c.dentries, dentryKey{dir, st.Name})
			}
		}
		if st.Inode.Ino != 0 {
			c.noteInode(&st.Inode, wire.FilePath{Ino: dir, Path: st.Name})
			if st.LeaseMs > 0 && st.Inode.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				c.inodes[st.Inode.Ino].attrUntil = until
			}
		}
		dir = st.Inode.Ino
	}
	for i := range r.Dir.Entries {
		e := &r.Dir.Entries[i]
		if e.Inode.Cap.ID != 0 || e.Inode.Mode != 0 {
			c.noteInode(&e.Inode, wire.FilePath{})
		}
		if e.LeaseMs > 0 && dir != 0 && e.Inode.Ino != 0 {
			until := sent.Add(time.Duration(e.LeaseMs) * time.Millisecond)
			c.dentries[dentryKey{dir, e.Name}] = dentry{ino: e.Inode.Ino, until: until}
			if e.Inode.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				c.inodes[e.Inode.Ino].attrUntil = until
			}
		}
	}
}

// dropLeasesFor forgets the leases a change of req's touches: the names
// it changes and the attributes of the directories they are in (and,
// for a rename, of every directory: the moved one's too). c.mu is held.
func (c *Client) dropLeasesFor(req *wire.ClientRequest) {
	for _, p := range []wire.FilePath{req.Path, req.Path2} {
		if p.Ino == 0 {
			continue
		}
		if p.Path != "" {
			delete(c.dentries, dentryKey{p.Ino, p.Path})
		}
		if in := c.inodes[p.Ino]; in != nil {
			in.attrUntil = time.Time{}
		}
	}
	if req.Op == wire.MetaRename {
		for _, in := range c.inodes {
			in.attrUntil = time.Time{}
		}
	}
}

// dropAllLeases forgets every lease (the MDS that granted them is gone
// or forgot this client) and makes the kernel drop what it cached under
// them, in the background. c.mu is held.
func (c *Client) dropAllLeases() {
	now := c.clock.Now()
	var names []dentryKey
	for k, d := range c.dentries {
		if now.Before(d.until) {
			names = append(names, k)
		}
	}
	var inos []uint64
	for ino, in := range c.inodes {
		if now.Before(in.attrUntil) {
			inos = append(inos, ino)
		}
		in.attrUntil = time.Time{}
	}
	c.dentries = map[dentryKey]dentry{}
	inval := c.inval
	if len(names)+len(inos) == 0 || (inval.Entry == nil && inval.Inode == nil) {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for _, k := range names {
			if inval.Entry != nil {
				inval.Entry(k.dir, k.name)
			}
		}
		for _, ino := range inos {
			if inval.Inode != nil {
				inval.Inode(ino)
			}
		}
	}()
}

// leaseRevoked drops a revoked lease, makes the kernel drop what it
// cached under it, then acks (off the lock: the kernel may wait for a
// request of its own on the directory to end first). c.mu is held.
func (c *Client) leaseRevoked(m wire.ClientLease) {
	inval := c.inval
	if m.Name == "" {
		if in := c.inodes[m.Ino]; in != nil {
			in.attrUntil = time.Time{}
		}
	} else {
		delete(c.dentries, dentryKey{m.Ino, m.Name})
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if m.Name == "" && inval.Inode != nil {
			inval.Inode(m.Ino)
		} else if m.Name != "" && inval.Entry != nil {
			inval.Entry(m.Ino, m.Name)
		}
		ack := wire.ClientLease{Op: wire.LeaseRevokeAck, Ino: m.Ino, Name: m.Name, Seq: m.Seq}
		c.mu.Lock()
		c.send(msgr.Message{Type: wire.TypeClientLease, Version: 1, Payload: ack.Encode()})
		c.mu.Unlock()
	}()
}

// noteInode caches an inode's attributes and takes the cap it carries.
func (c *Client) noteInode(s *wire.InodeStat, path wire.FilePath) {
	in := c.inodes[s.Ino]
	if in == nil {
		in = &inode{}
		c.inodes[s.Ino] = in
	}
	if path.Path == "" && path.Ino == 0 {
		path = wire.FilePath{Ino: s.Ino}
	}
	if in.stat.Ino != 0 && s.Version != 0 && s.Version < in.stat.Version {
		// An older view (a reply built before one absorbed already):
		// only its cap counts.
		c.caps.Add(s.Ino, s.Cap, path)
		return
	}
	in.stat = *s
	in.stat.Cap = wire.InodeCap{}
	if in.data != nil {
		in.data.SetAttr(s.Size, s.Mtime.Time())
	}
	c.caps.Add(s.Ino, s.Cap, path)
}

// tick runs the cores' timers and refreshes the MDS map.
func (c *Client) loop() {
	defer c.wg.Done()
	t := c.clock.NewTimer(c.opts.Tick)
	defer t.Stop()
	lastPoll := time.Time{}
	for {
		select {
		case <-c.stop:
			return
		case <-c.pollCh:
		case <-t.C():
			t.Reset(c.opts.Tick)
		}
		now := c.clock.Now()
		c.mu.Lock()
		c.sess.Tick(now)
		c.caps.Tick(now)
		c.runLocked()
		c.mu.Unlock()
		if now.Sub(lastPoll) >= c.opts.MapPoll || c.pollWanted() {
			lastPoll = now
			c.refreshMap()
		}
	}
}

// pollNow asks the loop to read the MDS map at once.
func (c *Client) pollNow() {
	c.pollFlag = true // under c.mu
	select {
	case c.pollCh <- struct{}{}:
	default:
	}
}

func (c *Client) pollWanted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.pollFlag
	c.pollFlag = false
	return w
}

// refreshMap reads the file system's entry and tells the session who
// holds rank 0.
func (c *Client) refreshMap() {
	ctx, cancel := context.WithTimeout(c.runCtx, c.opts.MapPoll*5)
	defer cancel()
	info, err := readFS(ctx, c.conn, c.fsName)
	if err != nil {
		c.log.Debug("reading the MDS map", "err", err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.info = info
	c.sess.MapChanged(info.Rank0, c.clock.Now())
	c.runLocked()
}
