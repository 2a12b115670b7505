package mdcache

import (
	"math"
	"slices"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Advisory file locks across clients: fcntl (POSIX record locks, per
// lock owner, byte ranges) and flock (per open file, whole file), which
// do not interact, as on Linux. They are not journaled: after a
// takeover the clients report the locks they hold (Reconnect), as in
// CephFS. The table is pure; the requests that wait (F_SETLKW, flock
// without LOCK_NB) are answered when a conflicting lock goes.

// heldLock is one granted lock: [start, end) of the file.
type heldLock struct {
	client     ClientID
	owner      uint64
	kind, typ  uint8
	start, end uint64
	pid        uint64
}

func (l heldLock) sameOwner(o heldLock) bool {
	return l.client == o.client && l.owner == o.owner && l.kind == o.kind
}

// conflicts reports whether l and o cannot both be held.
func (l heldLock) conflicts(o heldLock) bool {
	return l.kind == o.kind && !l.sameOwner(o) && l.start < o.end && o.start < l.end &&
		(l.typ == wire.LockExclusive || o.typ == wire.LockExclusive)
}

// lockWaiter is a request waiting for its lock.
type lockWaiter struct {
	r    *request
	lock heldLock
}

type inodeLocks struct {
	held    []heldLock
	waiting []*lockWaiter
}

// fileLocks is the rank's lock table.
type fileLocks struct {
	byIno map[mdtypes.Ino]*inodeLocks
}

func lockOf(client ClientID, fl wire.FileLock) heldLock {
	l := heldLock{client: client, owner: fl.Owner, kind: fl.Kind, typ: fl.Type, start: fl.Start, pid: fl.PID}
	switch {
	case fl.Kind == wire.LockFlock || fl.Length == 0:
		l.end = math.MaxUint64
	case fl.Start > math.MaxUint64-fl.Length:
		l.end = math.MaxUint64
	default:
		l.end = fl.Start + fl.Length
	}
	if fl.Kind == wire.LockFlock {
		l.start = 0
	}
	return l
}

func (l heldLock) wire() wire.FileLock {
	fl := wire.FileLock{Kind: l.kind, Type: l.typ, Start: l.start, PID: l.pid, Owner: l.owner}
	if l.end != math.MaxUint64 {
		fl.Length = l.end - l.start
	}
	return fl
}

func (t *fileLocks) inode(ino mdtypes.Ino) *inodeLocks {
	if t.byIno == nil {
		t.byIno = map[mdtypes.Ino]*inodeLocks{}
	}
	il := t.byIno[ino]
	if il == nil {
		il = &inodeLocks{}
		t.byIno[ino] = il
	}
	return il
}

// conflict returns the first held lock that conflicts with l.
func (il *inodeLocks) conflict(l heldLock) (heldLock, bool) {
	for _, h := range il.held {
		if h.conflicts(l) {
			return h, true
		}
	}
	return heldLock{}, false
}

// set applies l for its owner: the owner's locks of its kind in l's
// range are cut out, and l (unless an unlock) takes their place.
func (il *inodeLocks) set(l heldLock) {
	var out []heldLock
	for _, h := range il.held {
		if !h.sameOwner(l) || h.end <= l.start || l.end <= h.start {
			out = append(out, h)
			continue
		}
		if h.start < l.start {
			left := h
			left.end = l.start
			out = append(out, left)
		}
		if h.end > l.end {
			right := h
			right.start = l.end
			out = append(out, right)
		}
	}
	if l.typ != wire.LockUnlock {
		out = append(out, l)
	}
	il.held = out
}

// wake grants the waiting locks that no longer conflict, in order, and
// returns the answers to send (after c.mu is released).
func (il *inodeLocks) wake() []func() {
	var out []func()
	for {
		i := slices.IndexFunc(il.waiting, func(w *lockWaiter) bool {
			_, busy := il.conflict(w.lock)
			return !busy
		})
		if i < 0 {
			return out
		}
		w := il.waiting[i]
		il.waiting = slices.Delete(il.waiting, i, i+1)
		il.set(w.lock)
		out = append(out, func() {
			w.r.rep.Safe = true
			w.r.reply(w.r.rep)
		})
	}
}

// dropClient releases a client's locks and waits (its session ended)
// and returns the answers to the waiters it unblocked.
func (t *fileLocks) dropClient(client ClientID) []func() {
	var out []func()
	for ino, il := range t.byIno {
		il.held = slices.DeleteFunc(il.held, func(h heldLock) bool { return h.client == client })
		il.waiting = slices.DeleteFunc(il.waiting, func(w *lockWaiter) bool { return w.r.client == client })
		out = append(out, il.wake()...)
		if len(il.held) == 0 && len(il.waiting) == 0 {
			delete(t.byIno, ino)
		}
	}
	return out
}

// opSetFileLock takes, changes or releases a lock: EAGAIN if it
// conflicts and the caller does not wait; otherwise it waits.
func (c *Cache) opSetFileLock(r *request) error {
	_, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return err
	}
	fl := r.req.Lock
	if fl.Kind != wire.LockFcntl && fl.Kind != wire.LockFlock || fl.Type < wire.LockShared || fl.Type > wire.LockUnlock {
		return syscall.EINVAL
	}
	if ci.in.IsDir() && fl.Kind == wire.LockFcntl {
		return syscall.EINVAL
	}
	l := lockOf(r.client, fl)
	il := c.locks.inode(ci.in.Ino)
	if l.typ != wire.LockUnlock {
		if _, busy := il.conflict(l); busy {
			if !fl.Wait {
				return syscall.EAGAIN
			}
			il.waiting = append(il.waiting, &lockWaiter{r: r, lock: l})
			return errWait
		}
	}
	il.set(l)
	r.post = append(r.post, il.wake()...)
	return nil
}

// opGetFileLock answers a lock that conflicts with the one asked about,
// or one of type LockUnlock if none does (F_GETLK).
func (c *Cache) opGetFileLock(r *request) error {
	_, ci, err := c.target(r, r.req.Path)
	if err != nil {
		return err
	}
	fl := r.req.Lock
	if fl.Kind != wire.LockFcntl && fl.Kind != wire.LockFlock {
		return syscall.EINVAL
	}
	r.rep.Lock = wire.FileLock{Kind: fl.Kind, Type: wire.LockUnlock}
	if il := c.locks.byIno[ci.in.Ino]; il != nil {
		if h, busy := il.conflict(lockOf(r.client, fl)); busy {
			r.rep.Lock = h.wire()
		}
	}
	return nil
}
