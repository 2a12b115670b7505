package captab

import (
	"fmt"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Cap is the client's cap on one inode.
type Cap struct {
	Ino  uint64
	ID   uint64
	Rank int32
	// Issued: what the MDS grants now. Implemented: what the client
	// may still be using (issued plus revoked bits not yet acked).
	Issued, Implemented locker.Caps
	// Wanted: what the client's opens want.
	Wanted        locker.Caps
	Seq, IssueSeq uint64
	// RevokeSeq is the Seq of the last revocation handed to the
	// driver: its RevokeDone acks, at the cap's Seq then (a grant
	// after a revocation is never acked by itself, so the ack must
	// cover it).
	RevokeSeq  uint64
	MigrateSeq uint32
	Lazy       bool
	// Path is how the inode is reached from the root, for a
	// reconnect.
	Path wire.FilePath
	// Dirty: the bits under which the client changed attributes it has
	// not flushed yet; Flushing: flushes sent, not acked (tid ->
	// bits).
	Dirty    locker.Caps
	Flushing map[uint64]locker.Caps

	opens     map[locker.OpenMode]int
	idleSince time.Time // when the last open closed
}

// open reports whether the file is open on this client.
func (c *Cap) open() bool { return len(c.opens) > 0 }

// ActionKind says what an Action asks the driver to do.
type ActionKind uint8

// Actions.
const (
	// Send: send Msg to the rank. When Msg.Dirty is set, the driver
	// first fills in the attributes (size, mtime, atime, ctime, mode,
	// owner, xattrs) the client changed.
	Send ActionKind = iota + 1
	// Revoke: stop using the bits of Implemented not in Caps (no cached
	// reads without Fc, write back buffered data before losing Fb),
	// then call Table.RevokeDone(Ino, Seq). Msg, when set, carries the
	// MDS's attributes, as for Changed.
	Revoke
	// Changed: the issued caps grew to Caps, with the MDS's attributes
	// in Msg (a grant): the file may cache or buffer again.
	Changed
	// FlushAcked: the MDS has journaled flush FlushTID of Ino.
	FlushAcked
	// Dropped: the cap on Ino is gone (released, or the session lost):
	// drop the inode's cached data and attributes.
	Dropped
)

var kindNames = [...]string{"", "send", "revoke", "changed", "flush-acked", "dropped"}

func (k ActionKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("action(%d)", uint8(k))
}

// Action is one thing for the driver to do.
type Action struct {
	Kind     ActionKind
	Ino      uint64
	Caps     locker.Caps
	Seq      uint64
	FlushTID uint64
	Msg      *wire.ClientCaps
}

func (a Action) String() string {
	switch a.Kind {
	case Send:
		m := a.Msg
		s := fmt.Sprintf("send %s ino %#x cap %d seq %d issue_seq %d caps %v wanted %v", m.Op, m.Ino, m.CapID, m.Seq,
			m.IssueSeq, locker.Caps(m.Caps), locker.Caps(m.Wanted))
		if m.Dirty != 0 {
			s += fmt.Sprintf(" dirty %v flush %d oldest %d", locker.Caps(m.Dirty), m.FlushTID, m.OldestFlushTID)
		}
		return s
	case Revoke:
		return fmt.Sprintf("revoke ino %#x to %v seq %d", a.Ino, a.Caps, a.Seq)
	case Changed:
		return fmt.Sprintf("changed ino %#x to %v", a.Ino, a.Caps)
	case FlushAcked:
		return fmt.Sprintf("flush-acked ino %#x flush %d", a.Ino, a.FlushTID)
	case Dropped:
		return fmt.Sprintf("dropped ino %#x", a.Ino)
	}
	return a.Kind.String()
}

// Config tunes a Table.
type Config struct {
	// ReleaseDelay is how long the cap of a file no longer open is kept
	// (its cached attributes and data stay usable) before it is
	// released (default 5 s, Ceph's client_caps_release_delay).
	ReleaseDelay time.Duration
}

// Table is the client's caps, by inode.
type Table struct {
	cfg       Config
	caps      map[uint64]*Cap
	nextFlush uint64
	out       []Action
}

// New returns an empty table.
func New(cfg Config) *Table {
	if cfg.ReleaseDelay <= 0 {
		cfg.ReleaseDelay = 5 * time.Second
	}
	return &Table{cfg: cfg, caps: map[uint64]*Cap{}, nextFlush: 1}
}

// Take returns the actions since the last Take, in order.
func (t *Table) Take() []Action {
	out := t.out
	t.out = nil
	return out
}

func (t *Table) emit(a Action) { t.out = append(t.out, a) }

// Get returns the cap on ino (nil if none). The caller must not change
// it.
func (t *Table) Get(ino uint64) *Cap { return t.caps[ino] }

// Len is how many caps the table holds.
func (t *Table) Len() int { return len(t.caps) }

// Issued returns the bits the client may use on ino now (issued, as
// implemented bits beyond it are being given back) and whether it is
// open lazily.
func (t *Table) Issued(ino uint64) (locker.Caps, bool) {
	c := t.caps[ino]
	if c == nil {
		return 0, false
	}
	return c.Issued, c.Lazy
}

// Add takes the cap a reply hands out with inode ino (reached by path):
// a new cap, or a newer view of the one held. A cap id 0 is no cap.
func (t *Table) Add(ino uint64, ic wire.InodeCap, path wire.FilePath) {
	if ic.ID == 0 {
		return
	}
	c := t.caps[ino]
	if c == nil || c.ID != ic.ID {
		if c != nil {
			t.emit(Action{Kind: Dropped, Ino: ino})
		}
		c = &Cap{Ino: ino, ID: ic.ID, Flushing: map[uint64]locker.Caps{}, opens: map[locker.OpenMode]int{}}
		if old := t.caps[ino]; old != nil {
			c.opens, c.Dirty, c.Flushing = old.opens, old.Dirty, old.Flushing
		}
		t.caps[ino] = c
	} else if ic.Seq < c.Seq {
		return // older than what a cap message said since
	}
	c.Rank, c.Seq, c.IssueSeq, c.Lazy, c.Path = ic.Rank, ic.Seq, ic.IssueSeq, ic.Lazy, path
	c.Issued = locker.Caps(ic.Caps)
	if c.Implemented&^c.Issued != 0 {
		// The reply's cap is smaller than what the client may be
		// using: give the difference back as for a revocation.
		c.RevokeSeq = c.Seq
		c.Implemented |= c.Issued
		t.emit(Action{Kind: Revoke, Ino: ino, Caps: c.Issued, Seq: c.Seq})
		return
	}
	c.Implemented = c.Issued
	t.emit(Action{Kind: Changed, Ino: ino, Caps: c.Issued})
}

// Open records an open of ino in mode (the open request named the caps
// it wants).
func (t *Table) Open(ino uint64, mode locker.OpenMode) {
	c := t.caps[ino]
	if c == nil {
		return
	}
	c.opens[mode]++
	c.Wanted = c.wanted()
}

func (c *Cap) wanted() locker.Caps {
	var w locker.Caps
	for m := range c.opens {
		w |= locker.WantedFor(m)
	}
	return w
}

// Close records a close of ino opened in mode at now. The cap is kept
// (what it wants shrinks at the last close) and released after the
// release delay unless the file is opened again.
func (t *Table) Close(ino uint64, mode locker.OpenMode, now time.Time) {
	c := t.caps[ino]
	if c == nil || c.opens[mode] == 0 {
		return
	}
	c.opens[mode]--
	if c.opens[mode] == 0 {
		delete(c.opens, mode)
	}
	if !c.open() {
		c.Wanted = 0
		c.idleSince = now
	}
}

// MarkDirty records that the client changed attributes of ino under
// bits (size and mtime under Fw, Fb or Fx; mode under Ax; ...).
func (t *Table) MarkDirty(ino uint64, bits locker.Caps) {
	if c := t.caps[ino]; c != nil {
		c.Dirty |= bits
	}
}

// oldestFlush is the oldest flush tid not acked on any cap (0: none).
func (t *Table) oldestFlush() uint64 {
	var oldest uint64
	for _, c := range t.caps {
		for tid := range c.Flushing {
			if oldest == 0 || tid < oldest {
				oldest = tid
			}
		}
	}
	return oldest
}

// msg returns a cap message of op about c, with a flush of its dirty
// attributes if it has any.
func (t *Table) msg(c *Cap, op wire.CapOp) *wire.ClientCaps {
	m := &wire.ClientCaps{Op: op, Ino: c.Ino, CapID: c.ID, Rank: c.Rank, Seq: c.Seq, IssueSeq: c.IssueSeq,
		MigrateSeq: c.MigrateSeq, Caps: uint32(c.Issued), Wanted: uint32(c.Wanted), Lazy: c.Lazy}
	if c.Dirty != 0 {
		tid := t.nextFlush
		t.nextFlush++
		c.Flushing[tid] = c.Dirty
		m.Dirty, m.FlushTID = uint32(c.Dirty), tid
		c.Dirty = 0
	}
	m.OldestFlushTID = t.oldestFlush()
	return m
}

// Flush sends the dirty attributes of ino (fsync) and returns the flush
// tid to wait for (0: nothing was dirty).
func (t *Table) Flush(ino uint64) uint64 {
	c := t.caps[ino]
	if c == nil || c.Dirty == 0 {
		return 0
	}
	m := t.msg(c, wire.CapFlush)
	t.emit(Action{Kind: Send, Ino: ino, Msg: m})
	return m.FlushTID
}

// Flushing reports whether ino has a flush not yet acked at or below
// tid.
func (t *Table) Flushing(ino, tid uint64) bool {
	c := t.caps[ino]
	if c == nil {
		return false
	}
	for f := range c.Flushing {
		if f <= tid {
			return true
		}
	}
	return false
}

// Handle takes a cap message from the MDS.
func (t *Table) Handle(m *wire.ClientCaps) {
	c := t.caps[m.Ino]
	// A flush ack is matched by its flush tid (unique per client), not
	// by cap id: the MDS's ack may not name the cap (the engine sends 0).
	if c == nil || (m.CapID != c.ID && m.Op != wire.CapImport && m.Op != wire.CapFlushAck) {
		return // a cap released or replaced since
	}
	switch m.Op {
	case wire.CapGrant, wire.CapRevoke:
		if m.Seq <= c.Seq && c.Seq != 0 {
			return
		}
		prev := c.Implemented
		c.Seq = m.Seq
		if m.IssueSeq == m.Seq || m.Op == wire.CapGrant {
			c.IssueSeq = m.Seq
		}
		c.Issued = locker.Caps(m.Caps)
		c.Lazy = m.Lazy || c.Lazy
		if prev&^c.Issued != 0 {
			// Bits are taken: the driver stops using them, flushes,
			// then RevokeDone acks. Bits the message grants (a grant
			// that came before an earlier revocation was acked) are in
			// use from now on: a later revocation must see them taken.
			c.RevokeSeq = m.Seq
			c.Implemented = prev | c.Issued
			t.emit(Action{Kind: Revoke, Ino: c.Ino, Caps: c.Issued, Seq: m.Seq, Msg: m})
			return
		}
		c.Implemented = c.Issued
		t.emit(Action{Kind: Changed, Ino: c.Ino, Caps: c.Issued, Msg: m})
	case wire.CapFlushAck:
		for tid := range c.Flushing {
			if tid <= m.FlushTID {
				delete(c.Flushing, tid)
			}
		}
		t.emit(Action{Kind: FlushAcked, Ino: c.Ino, FlushTID: m.FlushTID})
	case wire.CapImport:
		c.ID, c.Rank, c.Seq, c.IssueSeq, c.MigrateSeq = m.CapID, m.Rank, m.Seq, m.IssueSeq, m.MigrateSeq
		c.RevokeSeq = 0 // the old rank's revocations died with its cap
		c.Issued = locker.Caps(m.Caps)
		c.Implemented = c.Issued
		t.emit(Action{Kind: Changed, Ino: c.Ino, Caps: c.Issued, Msg: m})
	}
}

// RevokeDone says the driver has stopped using the bits revoked by the
// message of seq on ino and flushed what they covered: the table acks,
// with the dirty attributes as a flush. An answer to a revocation
// superseded by a later one is dropped (the later one's answer acks
// both). A grant that came after the revocation (giving some bits back)
// does not supersede it: the ack names the grant's seq, which the MDS
// takes as acknowledging every revocation up to it.
func (t *Table) RevokeDone(ino, seq uint64) {
	c := t.caps[ino]
	if c == nil || seq != c.RevokeSeq {
		return
	}
	c.Implemented = c.Issued
	t.emit(Action{Kind: Send, Ino: ino, Msg: t.msg(c, wire.CapAck)})
}

// Tick releases the caps of files closed longer than the release delay
// ago.
func (t *Table) Tick(now time.Time) {
	for _, ino := range t.idle(func(c *Cap) bool { return now.Sub(c.idleSince) >= t.cfg.ReleaseDelay }) {
		t.release(ino)
	}
}

// Recall releases the caps of closed files, longest closed first,
// until at most max are held (the MDS's recall; open files keep theirs).
func (t *Table) Recall(max uint64) {
	idle := t.idle(func(*Cap) bool { return true })
	slices.SortStableFunc(idle, func(a, b uint64) int { return t.caps[a].idleSince.Compare(t.caps[b].idleSince) })
	for _, ino := range idle {
		if uint64(len(t.caps)) <= max {
			return
		}
		t.release(ino)
	}
}

// ReleaseAll gives every cap back, open or not, each release carrying
// its dirty attributes as a flush: the unmount's last word before it
// closes the session. A session closed while it still holds write caps
// is fenced by the MDS, and other clients wait on those files until the
// fence completes.
func (t *Table) ReleaseAll() {
	inos := make([]uint64, 0, len(t.caps))
	for ino := range t.caps {
		inos = append(inos, ino)
	}
	slices.Sort(inos)
	for _, ino := range inos {
		t.release(ino)
	}
}

// idle returns the inodes, sorted, of caps not open, without revoked
// bits in use or flushes not yet acked (a release would lose them if
// the MDS died before journaling them: the reconnect reports them), that
// keep holds.
func (t *Table) idle(keep func(*Cap) bool) []uint64 {
	var inos []uint64
	for ino, c := range t.caps {
		if !c.open() && c.Implemented == c.Issued && len(c.Flushing) == 0 && keep(c) {
			inos = append(inos, ino)
		}
	}
	slices.Sort(inos)
	return inos
}

// release gives the cap on ino back.
func (t *Table) release(ino uint64) {
	c := t.caps[ino]
	m := t.msg(c, wire.CapRelease)
	m.Caps, m.Wanted = 0, 0
	delete(t.caps, ino)
	t.emit(Action{Kind: Send, Ino: ino, Msg: m})
	t.emit(Action{Kind: Dropped, Ino: ino})
}

// Reconnect returns the client's report of its caps to a rank that took
// over (its file locks are the driver's to add, and a flush's size and
// mtime): each cap with its seq, issue seq, implemented bits, wants and
// path, and its flushes not acked as one (the union of their bits, the
// newest tid; the new rank applies the current values and acks them).
func (t *Table) Reconnect() *wire.ClientReconnect {
	m := &wire.ClientReconnect{}
	inos := make([]uint64, 0, len(t.caps))
	for ino := range t.caps {
		inos = append(inos, ino)
	}
	slices.Sort(inos)
	for _, ino := range inos {
		c := t.caps[ino]
		rc := wire.ReconnectCap{Ino: ino, CapID: c.ID, Seq: c.Seq, IssueSeq: c.IssueSeq, Issued: uint32(c.Implemented),
			Wanted: uint32(c.Wanted), Lazy: c.Lazy, Path: c.Path}
		for tid, bits := range c.Flushing {
			rc.FlushTID = max(rc.FlushTID, tid)
			rc.Dirty |= uint32(bits)
		}
		m.Caps = append(m.Caps, rc)
	}
	return m
}

// Lost drops every cap (the session ended or the client missed a
// reconnect): the driver drops the inodes' caches.
func (t *Table) Lost() {
	inos := make([]uint64, 0, len(t.caps))
	for ino := range t.caps {
		inos = append(inos, ino)
	}
	slices.Sort(inos)
	for _, ino := range inos {
		delete(t.caps, ino)
		t.emit(Action{Kind: Dropped, Ino: ino})
	}
}
