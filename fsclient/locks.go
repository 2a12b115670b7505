package fsclient

import (
	"context"
	"slices"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// Lock is an advisory lock: Type wire.LockShared, LockExclusive or
// LockUnlock; Start and Length the byte range (Length 0: to the end);
// PID the owner's process as F_GETLK reports it.
type Lock struct {
	Type          uint8
	Start, Length uint64
	PID           uint64
}

// Fcntl locks (F_SETLK, or F_SETLKW with wait) byte range of the file
// for owner (the process or open-file-description id the caller uses).
func (f *File) Fcntl(ctx context.Context, owner uint64, l Lock, wait bool) error {
	return f.setLock(ctx, wire.FileLock{Kind: wire.LockFcntl, Type: l.Type, Start: l.Start, Length: l.Length,
		PID: l.PID, Owner: owner, Wait: wait})
}

// GetLock returns a lock that would conflict with l for owner (F_GETLK),
// or one of type LockUnlock if none does.
func (f *File) GetLock(ctx context.Context, owner uint64, l Lock) (Lock, error) {
	r, err := f.c.do(ctx, &wire.ClientRequest{Op: wire.MetaGetFileLock, Path: wire.FilePath{Ino: f.ino},
		Lock: wire.FileLock{Kind: wire.LockFcntl, Type: l.Type, Start: l.Start, Length: l.Length, PID: l.PID, Owner: owner}}, false)
	if err != nil {
		return Lock{}, pathErr("getlk", f.path, err)
	}
	return Lock{Type: r.Lock.Type, Start: r.Lock.Start, Length: r.Lock.Length, PID: r.Lock.PID}, nil
}

// Flock takes or drops a whole-file BSD lock for the open file
// (typ wire.LockShared, LockExclusive or LockUnlock; wait unless
// LOCK_NB).
func (f *File) Flock(ctx context.Context, typ uint8, wait bool) error {
	return f.setLock(ctx, wire.FileLock{Kind: wire.LockFlock, Type: typ, Owner: uint64(f.ino)<<1 | 1, Wait: wait})
}

func (f *File) setLock(ctx context.Context, l wire.FileLock) error {
	_, err := f.c.do(ctx, &wire.ClientRequest{Op: wire.MetaSetFileLock, Path: wire.FilePath{Ino: f.ino}, Lock: l}, false)
	if err != nil {
		return pathErr("lock", f.path, err)
	}
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	held := slices.DeleteFunc(c.locks[f.ino], func(h wire.FileLock) bool {
		return h.Kind == l.Kind && h.Owner == l.Owner && (l.Kind == wire.LockFlock || h.Start == l.Start && h.Length == l.Length)
	})
	if l.Type != wire.LockUnlock {
		l.Wait = false
		held = append(held, l)
	}
	if len(held) == 0 {
		delete(c.locks, f.ino)
	} else {
		c.locks[f.ino] = held
	}
	return nil
}

// heldLocks lists the locks this client holds, for a reconnect.
func (c *Client) heldLocks() []wire.ReconnectLock {
	var out []wire.ReconnectLock
	inos := make([]uint64, 0, len(c.locks))
	for ino := range c.locks {
		inos = append(inos, ino)
	}
	slices.Sort(inos)
	for _, ino := range inos {
		for _, l := range c.locks[ino] {
			out = append(out, wire.ReconnectLock{Ino: ino, Lock: l})
		}
	}
	return out
}
