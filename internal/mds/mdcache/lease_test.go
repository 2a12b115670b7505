package mdcache

import (
	"context"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// answered reports whether rs got its first reply.
func (rs *replies) answered() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.n > 0
}

// Dentry leases: a lookup leases the name (present or absent) and a
// directory's attributes; another client's change revokes the lease and
// is answered only once the holder acked or the lease ran out; the
// changing client's own leases hold nothing up.
func TestDentryLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fs := newFS(t, 1)
		ob := &outbox{holdLeases: true}
		c := fs.open(t, ob)
		a := &tclient{c: c, id: 1}
		b := &tclient{c: c, id: 2}
		if rep := a.do(&wire.ClientRequest{Op: wire.MetaMkdir, Path: p("d"), Mode: 0o755 | syscall.S_IFDIR}); rep.Result != 0 {
			t.Fatalf("mkdir: %d", rep.Result)
		}

		// a's lookups: an absent name and a directory, both leased.
		rep := a.do(&wire.ClientRequest{Op: wire.MetaLookup, Path: p("d/x")})
		if last := rep.Trace[len(rep.Trace)-1]; rep.Result != -int32(syscall.ENOENT) || last.LeaseMs == 0 || last.Inode.Ino != 0 {
			t.Fatalf("negative lookup: result %d, last step %+v", rep.Result, last)
		}
		rep = a.do(&wire.ClientRequest{Op: wire.MetaLookup, Path: p("d")})
		dino := rep.Trace[len(rep.Trace)-1].Inode.Ino
		if rep.Trace[len(rep.Trace)-1].LeaseMs == 0 {
			t.Fatal("a directory's lookup carries no lease")
		}

		// a's own create of another name is not held up by a's leases.
		if rep := a.do(&wire.ClientRequest{Op: wire.MetaMknod, Path: p("d/own"), Mode: 0o644 | syscall.S_IFREG}); rep.Result != 0 {
			t.Fatalf("a's mknod: %d", rep.Result)
		}
		if got := ob.takeLeases(1); len(got) != 0 {
			t.Fatalf("a's own change revoked its leases: %+v", got)
		}
		// A change through the directory's inode (as a FUSE mount makes
		// it) leases the directory's new attributes to its maker.
		rep = a.do(&wire.ClientRequest{Op: wire.MetaMknod, Path: wire.FilePath{Ino: dino, Path: "own2"}, Mode: 0o644 | syscall.S_IFREG})
		if rep.Result != 0 || rep.Trace[0].Inode.Ino != dino || rep.Trace[0].LeaseMs == 0 || rep.Trace[0].Inode.Files != 2 {
			t.Fatalf("a's mknod in d: result %d, first step %+v", rep.Result, rep.Trace[0])
		}
		// a's create re-leased d: look both up again.
		a.do(&wire.ClientRequest{Op: wire.MetaLookup, Path: p("d/x")})
		a.do(&wire.ClientRequest{Op: wire.MetaLookup, Path: p("d")})

		// b creates d/x: a's leases on the name and on d's attributes
		// are revoked, and b waits for a's acks.
		rs := b.send(&wire.ClientRequest{Op: wire.MetaMknod, Path: p("d/x"), Mode: 0o644 | syscall.S_IFREG})
		synctest.Wait()
		if rs.answered() {
			t.Fatal("b's create answered before a acked the revocations")
		}
		revs := ob.takeLeases(1)
		want := map[leaseKey]bool{}
		for _, m := range revs {
			if m.Op != wire.LeaseRevoke {
				t.Fatalf("sent %+v", m)
			}
			want[leaseKey{mdtypes.Ino(m.Ino), m.Name}] = true
		}
		if !want[leaseKey{mdtypes.Ino(dino), "x"}] || !want[leaseKey{mdtypes.Ino(dino), ""}] {
			t.Fatalf("revoked %+v; want d/x and d's attributes", revs)
		}
		for i, m := range revs {
			c.HandleLease(context.Background(), 1, wire.ClientLease{Op: wire.LeaseRevokeAck, Ino: m.Ino, Name: m.Name, Seq: m.Seq})
			synctest.Wait()
			if got := rs.answered(); got != (i == len(revs)-1) {
				t.Fatalf("after %d of %d acks: answered %v", i+1, len(revs), got)
			}
		}
		<-rs.safe
		if rs.last.Result != 0 {
			t.Fatalf("b's create: %d", rs.last.Result)
		}

		// A holder that never acks holds a change up until its lease
		// runs out.
		a.do(&wire.ClientRequest{Op: wire.MetaLookup, Path: p("d/x")})
		rs = b.send(&wire.ClientRequest{Op: wire.MetaUnlink, Path: p("d/x")})
		synctest.Wait()
		if rs.answered() || len(ob.takeLeases(1)) == 0 {
			t.Fatal("b's unlink did not wait for a's lease")
		}
		c.Tick(time.Now().Add(c.cfg.DentryLease / 2))
		synctest.Wait()
		if rs.answered() {
			t.Fatal("b's unlink answered while a's lease lasts")
		}
		c.Tick(time.Now().Add(c.cfg.DentryLease + time.Millisecond))
		<-rs.safe
		if rs.last.Result != 0 || rs.unsafe == nil {
			t.Fatalf("b's unlink: %d (unsafe reply %v)", rs.last.Result, rs.unsafe != nil)
		}
		if st := c.Stats(); st.LeaseRevokes < 3 {
			t.Fatalf("stats: %+v", st)
		}

		// A client that closed its session (unmounted) holds nothing up.
		a.do(&wire.ClientRequest{Op: wire.MetaLookup, Path: p("d/y")})
		rs = b.send(&wire.ClientRequest{Op: wire.MetaMknod, Path: p("d/y"), Mode: 0o644 | syscall.S_IFREG})
		synctest.Wait()
		if rs.answered() || len(ob.takeLeases(1)) == 0 {
			t.Fatal("b's mknod did not wait for a's lease")
		}
		c.SessionEnded(1, locker.EndClosed)
		<-rs.safe
		if rs.last.Result != 0 {
			t.Fatalf("b's mknod: %d", rs.last.Result)
		}
		if n := c.leasesOf(1); n != 0 {
			t.Fatalf("a holds %d leases after its session ended", n)
		}
	})
}

// leasesOf counts client's leases.
func (c *Cache) leasesOf(client ClientID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, hs := range c.leases {
		if _, ok := hs[client]; ok {
			n++
		}
	}
	return n
}
