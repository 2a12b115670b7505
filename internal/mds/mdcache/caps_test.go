package mdcache

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// The paper, section 3.2: a stat of a file another client is writing
// revokes the writer's buffering caps; the reply waits for the writer's
// ack, which carries the size and mtime it flushed, and the flush is
// journaled and acked.
func TestStatCollectsFromWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 3)
		ob := &outbox{}
		c := fs.open(t, ob)
		a := &tclient{c: c, id: 10, uid: 1000, gid: 1000}
		b := &tclient{c: c, id: 11, uid: 1000, gid: 1000}
		root := &tclient{c: c, id: 1}
		if rep := root.do(&wire.ClientRequest{Op: wire.MetaMkdir, Path: p("w"), Mode: 0o777}); rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		rep := a.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: p("w/f"), Mode: 0o644, OpFlags: syscall.O_WRONLY | syscall.O_CREAT})
		if rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		st := rep.Trace[len(rep.Trace)-1].Inode
		if locker.Caps(st.Cap.Caps)&locker.FileWrite == 0 || st.Cap.ID == 0 {
			t.Fatalf("the creator's cap %s has no Fw", locker.Caps(st.Cap.Caps))
		}
		ob.take(a.id)
		pending := b.send(&wire.ClientRequest{Op: wire.MetaGetattr, Path: p("w/f")})
		revokes := ob.take(a.id)
		if len(revokes) != 1 || revokes[0].Op != wire.CapRevoke {
			t.Fatalf("the writer got %d cap messages, want one revoke", len(revokes))
		}
		select {
		case <-pending.safe:
			t.Fatal("the stat was answered before the writer flushed")
		default:
		}
		rv := revokes[0]
		mtime := wire.FSTime{Sec: 1 << 32, Nsec: 7}
		c.HandleCaps(context.Background(), a.id, &wire.ClientCaps{Op: wire.CapAck, Ino: rv.Ino, CapID: rv.CapID, Seq: rv.Seq,
			Dirty: uint32(locker.FileWrite | locker.FileBuffer | locker.FileExcl), FlushTID: 1, Size: 12345, Mtime: mtime})
		<-pending.safe
		got := pending.last.Trace[len(pending.last.Trace)-1].Inode
		if pending.last.Result != 0 || got.Size != 12345 || got.Mtime != mtime {
			t.Fatalf("stat after the flush: result %d size %d mtime %v", pending.last.Result, got.Size, got.Mtime)
		}
		// The flush is journaled: a new MDS has it.
		c2 := fs.open(t, nil)
		rep = (&tclient{c: c2, id: 1}).do(&wire.ClientRequest{Op: wire.MetaGetattr, Path: p("w/f")})
		if s := rep.Trace[len(rep.Trace)-1].Inode.Size; s != 12345 {
			t.Fatalf("after replay the size is %d", s)
		}
		var acked bool
		for _, m := range ob.take(a.id) {
			acked = acked || (m.Op == wire.CapFlushAck && m.FlushTID == 1)
		}
		if !acked {
			t.Fatal("the flush was not acked")
		}
	})
}

// An unlinked file still open stays, as a stray, until its last cap
// goes; then its data objects are removed with it.
func TestUnlinkOpenFileThenPurge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 4)
		purged := make(chan uint64, 4)
		c := fs.open(t, nil)
		c.cfg.Events.Purged = func(ino uint64, err error) {
			if err != nil {
				t.Error(err)
			}
			purged <- ino
		}
		c.Resume()
		a := &tclient{c: c, id: 10}
		rep := a.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: p("f"), Mode: 0o644, OpFlags: syscall.O_RDWR | syscall.O_CREAT})
		if rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		st := rep.Trace[len(rep.Trace)-1].Inode
		ino := st.Ino
		obj := mdtypes.FirstDataObject(mdtypes.Ino(ino))
		if err := fs.dataIO.WriteFull(context.Background(), obj, []byte("data")); err != nil {
			t.Fatal(err)
		}
		if rep := a.do(&wire.ClientRequest{Op: wire.MetaUnlink, Path: p("f")}); rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		if s := c.Stats(); s.Strays != 1 {
			t.Fatalf("strays %d after unlinking an open file, want 1", s.Strays)
		}
		if rep := a.do(&wire.ClientRequest{Op: wire.MetaLookupIno, Path: wire.FilePath{Ino: ino}}); rep.Result != 0 || rep.Trace[0].Inode.Nlink != 0 {
			t.Fatalf("the open unlinked file by number: %d", rep.Result)
		}
		c.HandleCaps(context.Background(), a.id, &wire.ClientCaps{Op: wire.CapRelease, Ino: ino, CapID: st.Cap.ID, IssueSeq: st.Cap.IssueSeq})
		if got := <-purged; got != ino {
			t.Fatalf("purged %#x, want %#x", got, ino)
		}
		if _, err := fs.dataIO.Read(context.Background(), obj, 0, 0); err == nil || !isNotFound(err) {
			t.Fatalf("the data object after the purge: %v", err)
		}
		if s := c.Stats(); s.Strays != 0 {
			t.Fatalf("strays %d after the purge", s.Strays)
		}
	})
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, rados.ErrNotFound) }

// A change resent after a failover with RequestReplay (the client had
// only its unsafe reply, or lost the safe one) is answered from the
// journal — or, once written back and trimmed, from the saved completed
// requests — and not applied twice.
func TestRequestReplayAnsweredOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 5)
		c := fs.open(t, nil)
		cl := &tclient{c: c, id: 20}
		req := &wire.ClientRequest{Op: wire.MetaCreate, Path: p("once"), Mode: 0o644, OpFlags: syscall.O_CREAT | syscall.O_EXCL}
		first := cl.do(req)
		if first.Result != 0 || first.CreatedIno == 0 {
			t.Fatal(first.Result)
		}
		for round, wb := range []bool{false, true} {
			if wb {
				if err := c.WriteBack(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			c = fs.open(t, nil)
			cl.c = c
			again := *req
			again.Flags |= wire.RequestReplay
			rep := cl.do(&again)
			if rep.Result != 0 || rep.CreatedIno != first.CreatedIno {
				t.Fatalf("round %d: the replayed create got %d, inode %#x; first %#x", round, rep.Result, rep.CreatedIno, first.CreatedIno)
			}
		}
		// A new request with O_EXCL does fail: the file is there once.
		if rep := cl.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: p("once"), OpFlags: syscall.O_CREAT | syscall.O_EXCL}); rep.Result != -int32(syscall.EEXIST) {
			t.Fatalf("a new exclusive create: %d", rep.Result)
		}
	})
}

// A change is answered twice, unsafe then safe; a read once, safe.
func TestUnsafeThenSafe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 6)
		c := fs.open(t, nil)
		cl := &tclient{c: c, id: 1}
		rs := cl.send(&wire.ClientRequest{Op: wire.MetaMkdir, Path: p("x"), Mode: 0o755})
		<-rs.safe
		if rs.n != 2 || rs.unsafe == nil || rs.unsafe.Result != 0 {
			t.Fatalf("mkdir: %d replies", rs.n)
		}
		rs = cl.send(&wire.ClientRequest{Op: wire.MetaGetattr, Path: p("x")})
		<-rs.safe
		if rs.n != 1 {
			t.Fatalf("getattr: %d replies", rs.n)
		}
	})
}

// O_LAZY (the paper's POSIX I/O extension, section 3.2): an open whose
// WantCaps has Fl makes a lazy cap; lazyio turns it off and on again
// for a file the client has open, and is EBADF for one it has not.
func TestLazyIO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 9)
		c := fs.open(t, nil)
		a := &tclient{c: c, id: 40}
		b := &tclient{c: c, id: 41}
		want := uint32(locker.WantedFor(locker.OpenRead | locker.OpenWrite | locker.OpenLazy))
		rep := a.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: p("lz"), Mode: 0o666, OpFlags: syscall.O_RDWR | syscall.O_CREAT, WantCaps: want})
		if rep.Result != 0 || !rep.Trace[len(rep.Trace)-1].Inode.Cap.Lazy {
			t.Fatalf("an O_LAZY create: %d, cap %+v", rep.Result, rep.Trace[len(rep.Trace)-1].Inode.Cap)
		}
		rep = a.do(&wire.ClientRequest{Op: wire.MetaLazyIO, Path: p("lz"), OpFlags: 0})
		if rep.Result != 0 || locker.Caps(rep.Trace[0].Inode.Cap.Wanted)&locker.FileLazy != 0 {
			t.Fatalf("lazyio off: %d, wanted %s", rep.Result, locker.Caps(rep.Trace[0].Inode.Cap.Wanted))
		}
		rep = a.do(&wire.ClientRequest{Op: wire.MetaLazyIO, Path: p("lz"), OpFlags: 1})
		if rep.Result != 0 || locker.Caps(rep.Trace[0].Inode.Cap.Wanted)&locker.FileLazy == 0 {
			t.Fatalf("lazyio on: %d, wanted %s", rep.Result, locker.Caps(rep.Trace[0].Inode.Cap.Wanted))
		}
		if rep := b.do(&wire.ClientRequest{Op: wire.MetaLazyIO, Path: p("lz"), OpFlags: 1}); rep.Result != -int32(syscall.EBADF) {
			t.Fatalf("lazyio by a client without the file open: %d", rep.Result)
		}
	})
}

// A truncate of a file another client writes takes the file lock: the
// writer's caps are revoked and its flush applied first, then the
// truncate, so the writer's buffered size does not undo it.
func TestTruncateRevokesWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 10)
		ob := &outbox{}
		c := fs.open(t, ob)
		a := &tclient{c: c, id: 50}
		b := &tclient{c: c, id: 51}
		rep := a.do(&wire.ClientRequest{Op: wire.MetaCreate, Path: p("t"), Mode: 0o666, OpFlags: syscall.O_WRONLY | syscall.O_CREAT})
		if rep.Result != 0 {
			t.Fatal(rep.Result)
		}
		ob.take(a.id)
		pending := b.send(&wire.ClientRequest{Op: wire.MetaSetattr, Path: p("t"), Mask: wire.AttrSize, Size: 10})
		revokes := ob.take(a.id)
		if len(revokes) != 1 || revokes[0].Op != wire.CapRevoke {
			t.Fatalf("the writer got %d cap messages, want one revoke", len(revokes))
		}
		select {
		case <-pending.safe:
			t.Fatal("the truncate went ahead of the writer's flush")
		default:
		}
		rv := revokes[0]
		c.HandleCaps(context.Background(), a.id, &wire.ClientCaps{Op: wire.CapAck, Ino: rv.Ino, CapID: rv.CapID, Seq: rv.Seq,
			Dirty: uint32(locker.FileWrite | locker.FileBuffer | locker.FileExcl), FlushTID: 1, Size: 5000})
		<-pending.safe
		if pending.last.Result != 0 {
			t.Fatal(pending.last.Result)
		}
		// The MDS's size (a statlite asking nothing exact: the writer,
		// granted its caps again, is not asked).
		rep = b.do(&wire.ClientRequest{Op: wire.MetaStatlite, Path: p("t")})
		if s := rep.Trace[len(rep.Trace)-1].Inode.Size; s != 10 || rep.Approx&wire.AttrSize == 0 {
			t.Fatalf("size after the truncate %d (approx %#x), want 10", s, rep.Approx)
		}
	})
}

// A write-back leaves nothing dirty and trims the journal to its end;
// the objects then hold the namespace without the journal.
func TestWriteBackTrims(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 11)
		c := fs.open(t, nil)
		cl := &tclient{c: c, id: 1}
		for i := range 50 {
			if rep := cl.do(&wire.ClientRequest{Op: wire.MetaMkdir, Path: p(fmt.Sprintf("d%d", i)), Mode: 0o755}); rep.Result != 0 {
				t.Fatal(rep.Result)
			}
		}
		if s := c.Stats(); s.JournalBytes == 0 || s.DirtyFrags == 0 {
			t.Fatalf("before write-back: %+v", s)
		}
		if err := c.WriteBack(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := c.Stats(); s.JournalBytes != 0 || s.DirtyFrags != 0 {
			t.Fatalf("after write-back: %+v", s)
		}
		c2 := fs.open(t, nil)
		cl.c = c2
		rep := cl.do(&wire.ClientRequest{Op: wire.MetaReaddir, Path: p("")})
		if rep.Result != 0 || len(rep.Dir.Entries) != 50 || !rep.Dir.Complete {
			t.Fatalf("readdir after a trimmed journal: %d, %d entries", rep.Result, len(rep.Dir.Entries))
		}
	})
}
