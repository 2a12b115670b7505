package locker

import (
	"errors"
	"fmt"
	"time"
)

// ErrReconnectConflict: a client's reconnecting cap conflicts with a cap
// another client has reconnected (which the rank before the failover
// never allowed): the client's reconnect is refused, and its session
// should be closed and its client fenced.
var ErrReconnectConflict = errors.New("locker: reconnecting cap conflicts with another client's")

// ReconnectCap is what a client tells a rank that took over after a
// failover about a cap it held: the cap as it knows it (id, the last
// seq and issue seq it saw, the bits it holds), what it wants, and the
// metadata it dirtied and has not seen acked.
type ReconnectCap struct {
	CapID    uint64
	Seq      uint64
	IssueSeq uint64
	Issued   Caps
	Wanted   Caps
	Lazy     bool
	Flush    *Flush
}

// Reconnect re-establishes client's cap on ino on a rank that has just
// replayed the journal of a failed one (the reconnect phase; the driver
// has Loaded the replayed size and mtime of the inodes first): the cap
// is taken as the client reports it and its flush applied, but nothing
// is granted or revoked until Resume, once every client has reconnected
// (a cap granted to one client meanwhile could conflict with what the
// next reports). The Locker must not have the cap already. A report
// that conflicts with a cap another client reconnected is refused
// (ErrReconnectConflict), changing nothing.
//
// Cap ids made from now on are above the reported one, so a new cap is
// never taken for one from before the failover.
func (l *Locker) Reconnect(client ClientID, ino Ino, rc ReconnectCap, now time.Time) ([]Action, error) {
	in := l.inode(ino)
	if in.caps[client] != nil {
		return nil, fmt.Errorf("locker: reconnect client.%d ino %#x: %w", client, ino, ErrAlreadyHere)
	}
	held := rc.Issued | Pin
	for i, c := range in.order {
		if other := in.list[i].Implemented; other.ConflictsWith(held) {
			return nil, fmt.Errorf("locker: reconnect client.%d ino %#x with %s: client.%d holds %s: %w",
				client, ino, held, c, other, ErrReconnectConflict)
		}
	}
	l.lastCapID = max(l.lastCapID, rc.CapID>>16)
	cp := &Capability{
		ID:          rc.CapID,
		Issued:      held,
		Implemented: held,
		Wanted:      rc.Wanted | Pin,
		Lazy:        rc.Lazy,
		Seq:         rc.Seq,
		IssueSeq:    rc.IssueSeq,
	}
	in.setCap(client, cp)
	l.track(client, ino)
	return l.applyFlush(client, ino, cp, rc.Flush, nil), nil
}

// Resume ends the reconnect phase: every inode is brought to a
// consistent state (lock states from the reconnected wants, revocations
// of what they no longer allow, grants of what is wanted and free).
// Clients that did not reconnect are not known here: the driver fences
// them before calling Resume, as their caps may still be in use.
func (l *Locker) Resume(now time.Time) []Action {
	var out []Action
	for _, ino := range l.Inodes() {
		out = l.evaluate(ino, now, out)
	}
	return out
}
