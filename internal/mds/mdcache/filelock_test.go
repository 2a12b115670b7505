package mdcache

import (
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/wire"
)

func lockReq(kind, typ uint8, start, length, owner uint64, wait bool) *wire.ClientRequest {
	return &wire.ClientRequest{Op: wire.MetaSetFileLock, Path: p("f"),
		Lock: wire.FileLock{Kind: kind, Type: typ, Start: start, Length: length, Owner: owner, PID: owner, Wait: wait}}
}

// fcntl record locks (POSIX fcntl F_SETLK, F_SETLKW, F_GETLK) and flock
// locks across clients: conflicting ranges fail with EAGAIN or wait,
// the two kinds do not interact (Linux), F_GETLK names the conflicting
// lock, and a client's locks go with its session.
func TestFileLocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 8)
		c := fs.open(t, nil)
		a := &tclient{c: c, id: 30}
		b := &tclient{c: c, id: 31}
		if rep := a.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: p("f"), Mode: 0o666}); rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		expect := func(what string, rep *wire.ClientReply, want syscall.Errno) {
			t.Helper()
			if got := syscall.Errno(-rep.Result); got != want {
				t.Fatalf("%s: %v, want %v", what, got, want)
			}
		}
		expect("a locks [0,100) exclusively", a.do(lockReq(wire.LockFcntl, wire.LockExclusive, 0, 100, 1, false)), 0)
		expect("b reads [50,60)", b.do(lockReq(wire.LockFcntl, wire.LockShared, 50, 10, 2, false)), syscall.EAGAIN)
		expect("b reads [100,EOF)", b.do(lockReq(wire.LockFcntl, wire.LockShared, 100, 0, 2, false)), 0)
		expect("a's other owner on [0,10)", a.do(lockReq(wire.LockFcntl, wire.LockShared, 0, 10, 9, false)), syscall.EAGAIN)
		expect("b flocks the file", b.do(lockReq(wire.LockFlock, wire.LockExclusive, 0, 0, 7, false)), 0)
		rep := b.do(&wire.ClientRequest{Op: wire.MetaGetFileLock, Path: p("f"), Lock: wire.FileLock{Kind: wire.LockFcntl, Type: wire.LockExclusive, Start: 20, Length: 1, Owner: 2}})
		if rep.Result != 0 || rep.Lock.Type != wire.LockExclusive || rep.Lock.PID != 1 || rep.Lock.Start != 0 || rep.Lock.Length != 100 {
			t.Fatalf("F_GETLK: %+v (%d)", rep.Lock, rep.Result)
		}
		// b waits for [0,10); a unlocks [0,50): b gets it.
		waiting := b.send(lockReq(wire.LockFcntl, wire.LockExclusive, 0, 10, 2, true))
		select {
		case <-waiting.safe:
			t.Fatal("a conflicting F_SETLKW was answered at once")
		default:
		}
		expect("a unlocks [0,50)", a.do(lockReq(wire.LockFcntl, wire.LockUnlock, 0, 50, 1, false)), 0)
		<-waiting.safe
		expect("b's wait", waiting.last, 0)
		expect("a still holds [50,100)", b.do(lockReq(wire.LockFcntl, wire.LockShared, 60, 1, 2, false)), syscall.EAGAIN)
		waiting = b.send(lockReq(wire.LockFcntl, wire.LockShared, 60, 1, 2, true))
		c.SessionEnded(a.id, locker.EndClosed)
		<-waiting.safe
		expect("b's wait after a's session ended", waiting.last, 0)
	})
}
