package locker

import (
	"slices"
	"time"
)

// OpenMode is what an open asks for.
type OpenMode int

// Open modes; OpenLazy combines with the others (O_LAZY).
const (
	OpenRead  OpenMode = 1 << iota // O_RDONLY, or the read half of O_RDWR
	OpenWrite                      // O_WRONLY, or the write half of O_RDWR
	OpenLazy                       // O_LAZY: relaxed coherence, Fl
)

// WantedFor returns the caps an open in mode wants. Every open wants
// the pin and the shared metadata bits; a reader wants to read, cache
// and see the size (Fscr); a writer wants to write, buffer, extend and
// update the size itself (Fxwba, with Fs); a lazy opener also wants Fl.
func WantedFor(mode OpenMode) Caps {
	w := Pin | AuthShared | LinkShared | XattrShared
	if mode&OpenRead != 0 {
		w |= FileShared | FileCache | FileRead
	}
	if mode&OpenWrite != 0 {
		w |= FileShared | FileExcl | FileWrite | FileBuffer | FileExtend
	}
	if mode&OpenLazy != 0 {
		w |= FileLazy
	}
	return w
}

// Open is an open request of client on ino in mode: the client's cap
// wants what the mode needs (added to what it wanted already, for a
// second open), and the reply carries the caps issued now. Bits that
// conflict with other clients' caps come later, in grants, once those
// clients have acked their revocations.
func (l *Locker) Open(req ReqID, client ClientID, ino Ino, mode OpenMode, now time.Time) []Action {
	in := l.inode(ino)
	cp := in.caps[client]
	if cp == nil {
		l.lastCapID++
		cp = &Capability{ID: l.lastCapID<<16 | uint64(uint16(l.rank))}
		in.setCap(client, cp)
		l.track(client, ino)
	}
	if cp.fencing {
		return nil // the session is over; its requests get no answer
	}
	cp.Wanted |= WantedFor(mode)
	cp.Lazy = cp.Lazy || mode&OpenLazy != 0
	acts := l.evaluate(ino, now, nil)
	// The grant to the opener travels in the open's reply.
	reply := Action{Kind: ActionReply, Req: req, Client: client, Ino: ino, Attrs: in.attrs,
		CapID: cp.ID, Caps: cp.Issued, Seq: cp.Seq, IssueSeq: cp.IssueSeq}
	acts = slices.DeleteFunc(acts, func(a Action) bool {
		return a.Kind == ActionGrant && a.Client == client && a.Ino == ino
	})
	return append(acts, reply)
}

// Want is a cap update from client on its cap capID on ino: it now
// wants wanted (it needs Fw for a write, or no longer needs what it
// had, say after closing one of two descriptors), with Flush carrying
// what it dirtied. Issued bits it no longer wants are given back at
// once — the client has stopped using them — unless the update crossed
// a grant (issueSeq older than the cap's): then they stay issued until
// a revocation or the next update. The pin is wanted while the cap
// exists.
func (l *Locker) Want(client ClientID, ino Ino, capID, issueSeq uint64, wanted Caps, flush *Flush, now time.Time) []Action {
	cp := l.live(client, ino)
	if cp == nil || cp.ID != capID {
		return nil
	}
	out := l.applyFlush(client, ino, cp, flush, nil)
	cp.Wanted = wanted | Pin
	if issueSeq >= cp.IssueSeq {
		cp.Issued &= cp.Wanted
		cp.Implemented = cp.Issued
		for _, r := range cp.revokes {
			cp.Implemented |= r.bits
		}
	}
	return l.evaluate(ino, now, out)
}

// Ack is client's answer to the cap message Seq of cap capID on ino:
// it no longer uses the bits revoked up to Seq. Flush, if not nil,
// carries the size and mtime it changed under Fw/Fb/Fx. An ack naming a
// Seq never sent is ignored; so is one for another cap (an older one
// the client released) or from a client without a cap.
func (l *Locker) Ack(client ClientID, ino Ino, capID, seq uint64, flush *Flush, now time.Time) []Action {
	cp := l.live(client, ino)
	if cp == nil || cp.ID != capID || seq > cp.Seq {
		return nil
	}
	out := l.applyFlush(client, ino, cp, flush, nil)
	cp.revokes = slices.DeleteFunc(cp.revokes, func(r revocation) bool { return r.seq <= seq })
	cp.Implemented = cp.Issued
	for _, r := range cp.revokes {
		cp.Implemented |= r.bits
	}
	return l.evaluate(ino, now, out)
}

// Release is client's close of its last file on ino: it drops cap
// capID (after flushing, with Flush). A release that names an IssueSeq
// older than the cap's crossed a grant in flight: the client will see
// the grant and release again, so only its flush is applied. A release
// of another cap (an older one) is ignored.
func (l *Locker) Release(client ClientID, ino Ino, capID, issueSeq uint64, flush *Flush, now time.Time) []Action {
	cp := l.live(client, ino)
	if cp == nil || cp.ID != capID {
		return nil
	}
	out := l.applyFlush(client, ino, cp, flush, nil)
	if issueSeq < cp.IssueSeq {
		return out
	}
	in := l.inodes[ino]
	in.delCap(client)
	l.untrack(client, ino)
	return l.evaluate(ino, now, out)
}

// EndReason says why a session ended.
type EndReason int

// Reasons.
const (
	EndClosed  EndReason = iota + 1 // the client closed its session
	EndTimeout                      // the session timed out (no renewal)
	EndEvicted                      // an operator or the revoke timeout evicted it
)

// SessionEnd drops every cap of client and its waiting requests. A
// client that implemented a write bit anywhere may still have writes in
// flight: the result asks for it to be blocklisted, and its caps keep
// blocking conflicting grants until Fenced. One that held none is
// forgotten at once.
func (l *Locker) SessionEnd(client ClientID, reason EndReason, now time.Time) []Action {
	inos := l.clientInos(client)
	var fence bool
	for _, ino := range inos {
		if cp := l.inodes[ino].caps[client]; cp.Implemented&AnyWrite != 0 {
			fence = true
		}
	}
	out := []Action{{Kind: ActionDropClient, Client: client, Blocklist: fence}}
	touched := slices.Clone(inos)
	for ino, in := range l.inodes {
		n := len(in.waiting)
		in.waiting = slices.DeleteFunc(in.waiting, func(r *Request) bool { return r.Client == client })
		if len(in.waiting) != n && !slices.Contains(touched, ino) {
			touched = append(touched, ino)
		}
	}
	slices.Sort(touched)
	for _, ino := range inos {
		in := l.inodes[ino]
		cp := in.caps[client]
		if fence {
			cp.fencing = true
			cp.Issued, cp.Wanted, cp.revokes = 0, 0, nil
		} else {
			in.delCap(client)
			l.untrack(client, ino)
		}
	}
	for _, ino := range touched {
		out = l.evaluate(ino, now, out)
	}
	return out
}

// Fenced tells the Locker that the OSDs now refuse client's writes (the
// blocklist is in their map): the caps it held are gone, and what they
// blocked may be granted.
func (l *Locker) Fenced(client ClientID, now time.Time) []Action {
	var out []Action
	for _, ino := range l.clientInos(client) {
		in := l.inodes[ino]
		if cp := in.caps[client]; cp != nil && cp.fencing {
			in.delCap(client)
			l.untrack(client, ino)
			out = l.evaluate(ino, now, out)
		}
	}
	return out
}

// Request queues a metadata request needing ino's locks; it is answered
// (ActionReply) now or once the clients have acked what must be
// revoked first. A stat of size or mtime while a client buffers writes
// revokes Fb (and Fw, Fx) so the writer flushes them first; a statlite
// that does not ask for them exactly answers at once.
func (l *Locker) Request(r Request, now time.Time) []Action {
	in := l.inode(r.Ino)
	if cp := in.caps[r.Client]; cp != nil && cp.fencing {
		return nil
	}
	req := r
	in.waiting = append(in.waiting, &req)
	return l.evaluate(r.Ino, now, nil)
}

// Done ends request id on ino, which held locks (a setattr). Attrs, if
// not nil, are the new size and mtime it set.
func (l *Locker) Done(ino Ino, id ReqID, attrs *FileAttrs, now time.Time) []Action {
	in := l.inodes[ino]
	if in == nil {
		return nil
	}
	held := false
	for k := range numLocks {
		if in.locks[k].xlock == id {
			in.locks[k].xlock = 0
			held = true
		}
	}
	if !held {
		return nil
	}
	if attrs != nil {
		in.attrs = *attrs
	}
	return l.evaluate(ino, now, nil)
}

// Tick reports the revocations left unacknowledged for the warning
// timeout (each once) and, with an eviction timeout, ends the sessions
// of the clients that let one pass it.
func (l *Locker) Tick(now time.Time) []Action {
	var out []Action
	var evict []ClientID
	inos := make([]Ino, 0, len(l.revoking))
	for ino := range l.revoking {
		inos = append(inos, ino)
	}
	slices.Sort(inos)
	for _, ino := range inos {
		in := l.inodes[ino]
		for _, c := range in.clientOrder() {
			cp := in.caps[c]
			for i := range cp.revokes {
				r := &cp.revokes[i]
				if !r.reported && !now.Before(r.sent.Add(l.cfg.RevokeWarn)) {
					r.reported = true
					out = append(out, Action{Kind: ActionLaggy, Client: c, Ino: ino, Revoking: cp.Revoking(), Since: r.sent})
				}
			}
			if since, ok := cp.RevokeSince(); ok && l.cfg.RevokeEvict > 0 && !now.Before(since.Add(l.cfg.RevokeEvict)) {
				if !slices.Contains(evict, c) {
					evict = append(evict, c)
				}
			}
		}
	}
	slices.Sort(evict)
	for _, c := range evict {
		out = append(out, l.SessionEnd(c, EndEvicted, now)...)
	}
	return out
}

// live returns client's cap on ino unless it has none or its session
// is over.
func (l *Locker) live(client ClientID, ino Ino) *Capability {
	in := l.inodes[ino]
	if in == nil {
		return nil
	}
	cp := in.caps[client]
	if cp == nil || cp.fencing {
		return nil
	}
	return cp
}

// clientInos returns the inodes client has caps on, in order.
func (l *Locker) clientInos(client ClientID) []Ino {
	var out []Ino
	for ino := range l.clients[client] {
		out = append(out, ino)
	}
	slices.Sort(out)
	return out
}

// applyFlush takes the size and mtime a client flushed, for the dirty
// bits it still implements: under Fx the client's size is the size (it
// may have truncated locally); under Fw, Fb or Fa only a larger size
// counts (writes in the mix state only extend). A flush TID already
// applied is acked again without being applied.
func (l *Locker) applyFlush(client ClientID, ino Ino, cp *Capability, f *Flush, out []Action) []Action {
	if f == nil {
		return out
	}
	in := l.inodes[ino]
	if f.TID == 0 || f.TID > cp.LastFlushTID {
		dirty := f.Dirty & cp.Implemented & LockFile.changeBits()
		switch {
		case dirty&FileExcl != 0:
			in.attrs.Size = f.Size
		case dirty != 0:
			in.attrs.Size = max(in.attrs.Size, f.Size)
		}
		if dirty != 0 && f.Mtime.After(in.attrs.Mtime) {
			in.attrs.Mtime = f.Mtime
		}
		cp.LastFlushTID = max(cp.LastFlushTID, f.TID)
	}
	if f.TID != 0 {
		out = append(out, Action{Kind: ActionFlushAck, Client: client, Ino: ino, CapID: cp.ID, TID: f.TID, Attrs: in.attrs})
	}
	return out
}
