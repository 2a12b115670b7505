package fsclient

// The end-to-end tests run the real MDS in the simulator: daemon.RunMDS
// with the engine (internal/mds/cacheengine).

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	mathrand "math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/daemon"
	"github.com/cuttlestore/cuttle/internal/mds/cacheengine"
	"github.com/cuttlestore/cuttle/internal/monc"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/rados"
)

// fsCluster is a simulated cluster with a file system "cephfs" and its
// MDS daemons.
type fsCluster struct {
	t    *testing.T
	c    *sim.Cluster
	mons []monc.Addr
	stop map[string]func()
}

// newFSCluster starts three OSDs, the pools, the file system and mds.a,
// and waits for it to be active.
func newFSCluster(t *testing.T) *fsCluster {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 9, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "cephfs_metadata", "pg_num", "8", "size", "2")
	c.Run("osd pool create", "pool", "cephfs_data", "pg_num", "8", "size", "2")
	c.Run("fs new", "fs_name", "cephfs", "metadata", "cephfs_metadata", "data", "cephfs_data")
	fc := &fsCluster{t: t, c: c, stop: map[string]func(){}}
	fc.mons = c.MonAddrs()
	fc.startMDS("a", 1)
	fc.waitStat("cephfs:1 {0=a=up:active}\n")
	t.Cleanup(func() {
		for _, stop := range fc.stop {
			stop()
		}
	})
	return fc
}

// startMDS runs mds.name with the real engine.
func (fc *fsCluster) startMDS(name string, nonce uint64) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	addr := "mds-" + name + ":6800"
	cfg := daemon.MDSConfig{Name: name, Listen: addr, Mons: fc.mons, Nonce: nonce, Network: fc.c.Net.Host(addr),
		Logger: sim.Logger("mds." + name), Overrides: map[string]string{"mds_reconnect_timeout": "5s"},
		Open: cacheengine.Opener()}
	go func() { done <- daemon.RunMDS(ctx, cfg) }()
	fc.stop[name] = func() {
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			fc.t.Errorf("mds.%s: %v", name, err)
		}
		delete(fc.stop, name)
	}
}

// waitStat waits for "mds stat" to read want.
func (fc *fsCluster) waitStat(want string) {
	fc.t.Helper()
	for i := 0; ; i++ {
		if got := fc.c.Run("mds stat").Text; got == want {
			return
		} else if i == 600 {
			fc.t.Fatalf("mds stat %q, want %q", got, want)
		}
		time.Sleep(100 * time.Millisecond) // virtual time: the beacons' pace
	}
}

// mount mounts the file system through a new rados client.
func (fc *fsCluster) mount(name string) (*Client, *rados.Conn) {
	fc.t.Helper()
	conn := fc.c.Client(name)
	cl, err := Mount(context.Background(), conn, "cephfs", Options{Caller: &Caller{UID: 0, GID: 0}})
	if err != nil {
		fc.t.Fatal(err)
	}
	fc.t.Cleanup(func() { cl.Close(context.Background()) })
	return cl, conn
}

// The namespace calls against the real MDS, with their POSIX errors.
func TestE2ENamespace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		cl, _ := fc.mount("client.a")
		ctx := context.Background()
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(cl.Mkdir(ctx, "/d", 0o755))
		if err := cl.Mkdir(ctx, "/d", 0o755); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("mkdir of an existing name: %v", err)
		}
		f, err := cl.Create(ctx, "/d/f", 0o644)
		must(err)
		data := bytes.Repeat([]byte("0123456789"), 100000) // 1 MB
		if _, err := f.Write(ctx, data); err != nil {
			t.Fatal(err)
		}
		must(f.Close(ctx))
		st, err := cl.Stat(ctx, "/d/f")
		must(err)
		if st.Size != uint64(len(data)) || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			t.Fatalf("stat %+v", st)
		}
		g, err := cl.Open(ctx, "/d/f")
		must(err)
		got := make([]byte, len(data)+10)
		n, err := g.ReadAt(ctx, got, 0)
		if n != len(data) || !errors.Is(err, io.EOF) || !bytes.Equal(got[:n], data) {
			t.Fatalf("read back %d bytes (%v), equal %v", n, err, bytes.Equal(got[:n], data))
		}
		must(g.Close(ctx))

		must(cl.Symlink(ctx, "d/f", "/link"))
		if target, err := cl.Readlink(ctx, "/link"); err != nil || target != "d/f" {
			t.Fatalf("readlink %q %v", target, err)
		}
		if st, err := cl.Stat(ctx, "/link"); err != nil || st.Size != uint64(len(data)) {
			t.Fatalf("stat through a symlink: %+v %v", st, err)
		}
		must(cl.Symlink(ctx, "loop", "/loop"))
		if _, err := cl.Stat(ctx, "/loop"); !errors.Is(err, syscall.ELOOP) {
			t.Fatalf("stat of a symlink loop: %v", err)
		}
		must(cl.Link(ctx, "/d/f", "/d/g"))
		must(cl.Rename(ctx, "/d/g", "/h"))
		if st, err := cl.Stat(ctx, "/h"); err != nil || st.Nlink != 2 {
			t.Fatalf("stat of the renamed link: %+v %v", st, err)
		}
		ents, err := cl.ReadDirPlus(ctx, "/")
		must(err)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name)
			if e.Stat == nil || e.Stat.Ino != e.Ino {
				t.Fatalf("readdirplus entry %+v without its attributes", e)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"d", "h", "link", "loop"}) {
			t.Fatalf("readdir of the root: %v", names)
		}
		if err := cl.Rmdir(ctx, "/d"); !errors.Is(err, syscall.ENOTEMPTY) {
			t.Fatalf("rmdir of a non-empty directory: %v", err)
		}
		must(cl.Setxattr(ctx, "/h", "user.k", []byte("v"), 0))
		if v, err := cl.Getxattr(ctx, "/h", "user.k"); err != nil || string(v) != "v" {
			t.Fatalf("getxattr %q %v", v, err)
		}
		must(cl.Chmod(ctx, "/h", 0o600))
		must(cl.Truncate(ctx, "/h", 10))
		if st, err := cl.Stat(ctx, "/d/f"); err != nil || st.Size != 10 || st.Mode&0o777 != 0o600 {
			t.Fatalf("stat after chmod and truncate: %+v %v", st, err)
		}
		must(cl.Unlink(ctx, "/d/f"))
		must(cl.Unlink(ctx, "/h"))
		must(cl.Rmdir(ctx, "/d"))
		if _, err := cl.Stat(ctx, "/d"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("stat of a removed directory: %v", err)
		}
	})
}

// Two clients on one file (the paper's section 3.2): a write buffered
// on one is read on the other as soon as that one opens it (the MDS
// revokes the writer's Fb, whose data is written back first); with both
// writing, I/O is synchronous and each reads the other's writes at
// once; a stat on the reader collects the writer's size.
func TestE2ETwoClientsOneFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		a, _ := fc.mount("client.a")
		b, _ := fc.mount("client.b")
		ctx := context.Background()
		fa, err := a.Create(ctx, "/shared", 0o666)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fa.Write(ctx, []byte("written on a")); err != nil {
			t.Fatal(err)
		}
		fb, err := b.OpenFile(ctx, "/shared", os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, err := fb.ReadAt(ctx, buf, 0)
		if string(buf[:n]) != "written on a" || !errors.Is(err, io.EOF) {
			t.Fatalf("b read %q (%v), want a's write", buf[:n], err)
		}
		for i := range 5 {
			msg := fmt.Sprintf("b%d", i)
			if _, err := fb.WriteAt(ctx, []byte(msg), int64(2*i)); err != nil {
				t.Fatal(err)
			}
			n, err := fa.ReadAt(ctx, buf[:2], int64(2*i))
			if err != nil || string(buf[:n]) != msg {
				t.Fatalf("a read %q (%v) after b wrote %q", buf[:n], err, msg)
			}
			msg = fmt.Sprintf("a%d", i)
			if _, err := fa.WriteAt(ctx, []byte(msg), int64(20+2*i)); err != nil {
				t.Fatal(err)
			}
			n, err = fb.ReadAt(ctx, buf[:2], int64(20+2*i))
			if err != nil || string(buf[:n]) != msg {
				t.Fatalf("b read %q (%v) after a wrote %q", buf[:n], err, msg)
			}
		}
		st, err := b.Stat(ctx, "/shared")
		if err != nil || st.Size != 30 {
			t.Fatalf("b's stat: %+v %v, want size 30 (a's last write)", st, err)
		}
		for _, f := range []*File{fa, fb} {
			if err := f.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// The rank's daemon dies under load; the standby takes over and the
// client's operations carry on, none lost: creates acknowledged before
// the death are all there after, and creates during the failover
// complete once the standby is active (issue 38: within 10 s).
func TestE2EFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		fc.startMDS("b", 2)
		fc.waitStat("cephfs:1 {0=a=up:active} 1 up:standby\n")
		cl, _ := fc.mount("client.a")
		ctx := context.Background()
		if err := cl.Mkdir(ctx, "/dir", 0o755); err != nil {
			t.Fatal(err)
		}
		var names []string
		create := func(i int) {
			t.Helper()
			name := fmt.Sprintf("/dir/f%03d", i)
			f, err := cl.Create(ctx, name, 0o644)
			if err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
			if _, err := f.Write(ctx, []byte(name)); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(ctx); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		for i := range 20 {
			create(i)
		}
		fc.stop["a"]() // SIGKILL's stand-in: its beacons and sessions stop
		died := time.Now()
		var slowest time.Duration
		for i := 20; i < 40; i++ {
			start := time.Now()
			create(i)
			slowest = max(slowest, time.Since(start))
		}
		t.Logf("creates resumed %v after the death; the slowest create took %v", time.Since(died), slowest)
		if slowest > 10*time.Second {
			t.Errorf("a create took %v across the failover; want under 10 s", slowest)
		}
		ents, err := cl.ReadDir(ctx, "/dir")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, "/dir/"+e.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, names) {
			t.Fatalf("after the failover /dir holds %d names, want %d:\n%v", len(got), len(names), got)
		}
		for _, name := range names {
			f, err := cl.Open(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 32)
			n, _ := f.ReadAt(ctx, buf, 0)
			if string(buf[:n]) != name {
				t.Fatalf("%s holds %q", name, buf[:n])
			}
			f.Close(ctx)
		}
	})
}

// Advisory locks exclude across clients (fcntl ranges and flock), and
// statlite answers without collecting the writer's size unless asked.
func TestE2ELocksAndStatlite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		a, _ := fc.mount("client.a")
		b, _ := fc.mount("client.b")
		ctx := context.Background()
		fa, err := a.Create(ctx, "/locked", 0o666)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := b.OpenFile(ctx, "/locked", os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := fa.Fcntl(ctx, 1, Lock{Type: wire.LockExclusive, Start: 0, Length: 100, PID: 11}, false); err != nil {
			t.Fatal(err)
		}
		if err := fb.Fcntl(ctx, 2, Lock{Type: wire.LockShared, Start: 50, Length: 10, PID: 22}, false); !errors.Is(err, syscall.EAGAIN) {
			t.Fatalf("a conflicting fcntl lock: %v, want EAGAIN", err)
		}
		if l, err := fb.GetLock(ctx, 2, Lock{Type: wire.LockShared, Start: 50, Length: 10}); err != nil || l.Type != wire.LockExclusive || l.PID != 11 {
			t.Fatalf("getlk %+v %v, want a's exclusive lock", l, err)
		}
		if err := fb.Fcntl(ctx, 2, Lock{Type: wire.LockShared, Start: 200, Length: 10}, false); err != nil {
			t.Fatalf("a lock on another range: %v", err)
		}
		if err := fa.Fcntl(ctx, 1, Lock{Type: wire.LockUnlock, Start: 0, Length: 100}, false); err != nil {
			t.Fatal(err)
		}
		if err := fb.Fcntl(ctx, 2, Lock{Type: wire.LockShared, Start: 50, Length: 10}, false); err != nil {
			t.Fatalf("the lock after a's unlock: %v", err)
		}
		if err := fa.Flock(ctx, wire.LockExclusive, false); err != nil {
			t.Fatal(err)
		}
		if err := fb.Flock(ctx, wire.LockShared, false); !errors.Is(err, syscall.EAGAIN) {
			t.Fatalf("a conflicting flock: %v, want EAGAIN", err)
		}
		if err := fa.Flock(ctx, wire.LockUnlock, false); err != nil {
			t.Fatal(err)
		}
		if err := fb.Flock(ctx, wire.LockShared, false); err != nil {
			t.Fatalf("flock after a's unlock: %v", err)
		}

		if _, err := fa.WriteAt(ctx, []byte("0123456789"), 0); err != nil {
			t.Fatal(err)
		}
		st, err := b.Statlite(ctx, "/locked", wire.AttrMode)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode&0o777 != 0o666 {
			t.Fatalf("statlite mode %o", st.Mode)
		}
		if st.Approx&wire.AttrSize == 0 {
			t.Errorf("statlite without AttrSize: size not flagged as possibly stale (approx %#x)", st.Approx)
		}
		st, err = b.Statlite(ctx, "/locked", wire.AttrSize)
		if err != nil || st.Size != 10 || st.Approx&wire.AttrSize != 0 {
			t.Fatalf("statlite of the size: %+v %v, want the writer's 10 bytes", st, err)
		}
		for _, f := range []*File{fa, fb} {
			if err := f.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// Lazy I/O (O_LAZY): two writers each buffer and cache; a's writes reach
// b after a's Propagate and b's Synchronize. And statfs reports the data
// pool.
func TestE2ELazyIOAndStatfs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		a, _ := fc.mount("client.a")
		b, _ := fc.mount("client.b")
		ctx := context.Background()
		fa, err := a.OpenFile(ctx, "/lazy", os.O_RDWR|os.O_CREATE|O_LAZY, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := b.OpenFile(ctx, "/lazy", os.O_RDWR|O_LAZY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fa.WriteAt(ctx, []byte("lazy write"), 0); err != nil {
			t.Fatal(err)
		}
		if err := fa.Propagate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := fb.Synchronize(ctx); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 32)
		n, _ := fb.ReadAt(ctx, buf, 0)
		if string(buf[:n]) != "lazy write" {
			t.Fatalf("b read %q after a's propagate and b's synchronize", buf[:n])
		}
		for _, f := range []*File{fa, fb} {
			if err := f.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		s, err := a.Statfs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// (The simulator's in-memory OSDs report no capacity, so the
		// counts may be zero here; the decoding and the arithmetic's
		// bounds are what this checks.)
		if s.Bsize != statfsBlock || s.Blocks < s.Bavail || s.Bfree != s.Bavail {
			t.Fatalf("statfs %+v", s)
		}
	})
}

// A client that goes silent while it holds write caps is evicted when
// its session autocloses, and fenced where it matters: the OSDs refuse
// its RADOS instance's writes (the instance it named at session open),
// so it cannot write file data behind the caps the MDS gives others.
func TestE2ESilentWriterIsFencedAtTheOSDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		a, conn := fc.mount("client.a")
		ctx := context.Background()
		f, err := a.Create(ctx, "/f", 0o666)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(ctx, []byte("from a")); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		data, err := conn.OpenIOContext("cephfs_data")
		if err != nil {
			t.Fatal(err)
		}
		if err := data.WriteFull(ctx, "probe", []byte("before")); err != nil {
			t.Fatalf("a writes to the data pool before its eviction: %v", err)
		}
		fc.c.Net.Freeze("client.a")
		for i := 0; !fc.c.Map().IsBlocklisted(conn.Instance(), time.Now()); i++ {
			if i == 1200 {
				t.Fatalf("client.a (%s) silent for 20 min with write caps is not blocklisted", conn.Instance())
			}
			time.Sleep(time.Second) // virtual time: the session timeouts
		}
		fc.c.Net.Thaw("client.a")
		if err := data.WriteFull(ctx, "probe", []byte("after the fence")); !errors.Is(err, rados.ErrBlocklisted) {
			t.Fatalf("a wrote to the data pool after its eviction: %v; want %v", err, rados.ErrBlocklisted)
		}
	})
}

// A full file system (Ceph's rule): data writes and metadata updates
// fail with ENOSPC, while reads, stats, deletes and truncates work, and
// the MDS keeps serving; once space is back, everything works again.
func TestE2EFullFileSystem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		cl, conn := fc.mount("client.a")
		ctx := context.Background()
		keep, err := cl.Create(ctx, "/keep", 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := keep.Write(ctx, bytes.Repeat([]byte("k"), 64<<10)); err != nil {
			t.Fatal(err)
		}
		if err := keep.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.Mkdir(ctx, "/victim", 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := conn.LookupPool("cephfs_data")
		if err != nil {
			t.Fatal(err)
		}
		waitFull := func(want bool) {
			t.Helper()
			for i := 0; conn.PoolFull(data) != want; i++ {
				if i == 600 {
					t.Fatalf("the data pool's full flag is not %v after 10 min", want)
				}
				time.Sleep(time.Second) // virtual time: the OSDs' usage reports
			}
		}
		// Every OSD holds some data: a full ratio below its usage
		// marks it, and the pools, full.
		fc.c.Run("osd set-full-ratio", "ratio", "0.0000001")
		waitFull(true)

		f, err := cl.OpenFile(ctx, "/keep", os.O_WRONLY, 0)
		if err != nil {
			t.Fatalf("open for writing on a full file system: %v", err)
		}
		if _, err := f.WriteAt(ctx, []byte("more"), 1<<20); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("a data write on a full file system: %v, want ENOSPC", err)
		}
		f.Close(ctx)
		if _, err := cl.Create(ctx, "/new", 0o644); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("create on a full file system: %v, want ENOSPC", err)
		}
		if err := cl.Mkdir(ctx, "/newdir", 0o755); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("mkdir on a full file system: %v, want ENOSPC", err)
		}
		if st, err := cl.Stat(ctx, "/keep"); err != nil || st.Size != 64<<10 {
			t.Fatalf("stat on a full file system: %+v %v", st, err)
		}
		if err := cl.Truncate(ctx, "/keep", 4<<10); err != nil {
			t.Fatalf("truncate on a full file system: %v", err)
		}
		if err := cl.Rmdir(ctx, "/victim"); err != nil {
			t.Fatalf("rmdir on a full file system: %v", err)
		}

		fc.c.Run("osd set-full-ratio", "ratio", "0.95")
		waitFull(false)
		g, err := cl.Create(ctx, "/new", 0o644)
		if err != nil {
			t.Fatalf("create once space is back: %v", err)
		}
		if _, err := g.Write(ctx, []byte("again")); err != nil {
			t.Fatal(err)
		}
		if err := g.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if st, err := cl.Stat(ctx, "/keep"); err != nil || st.Size != 4<<10 {
			t.Fatalf("/keep after the truncate: %+v %v", st, err)
		}
	})
}

// Close twice: the second returns the first's result, without a panic.
func TestE2ECloseTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		cl, _ := fc.mount("client.a")
		ctx := context.Background()
		if err := cl.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cl.Close(ctx); err != nil {
			t.Fatalf("a second Close: %v", err)
		}
	})
}

// Random writes, reads and truncates of one file through two clients
// that both hold it open, checked against a model of its bytes: every
// read and size sees what the other client did last (fsx's two-mount
// shape, in the library).
func TestE2ETwoClientsRandomOps(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	if *twoClientSeed != 0 {
		seeds = []uint64{*twoClientSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { twoClientsRandomOps(t, seed) })
	}
}

func twoClientsRandomOps(t *testing.T, seed uint64) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		a, _ := fc.mount("client.a")
		b, _ := fc.mount("client.b")
		ctx := context.Background()
		fa, err := a.OpenFile(ctx, "/fsx", os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := b.OpenFile(ctx, "/fsx", os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		files := []*File{fa, fb}
		rng := mathrand.New(mathrand.NewPCG(seed, 0))
		var model []byte
		const maxSize = 256 << 10
		var history []string
		for i := range 400 {
			who := rng.IntN(2)
			f := files[who]
			switch op := rng.IntN(11); {
			case op < 4: // write
				off, n := rng.IntN(maxSize), 1+rng.IntN(16<<10)
				n = min(n, maxSize-off)
				data := make([]byte, n)
				for j := range data {
					data[j] = byte(i + j)
				}
				history = append(history, fmt.Sprintf("%d %c write %#x+%#x", i, 'a'+who, off, n))
				if _, err := f.WriteAt(ctx, data, int64(off)); err != nil {
					t.Fatal(err)
				}
				if end := off + n; end > len(model) {
					model = append(model, make([]byte, end-len(model))...)
				}
				copy(model[off:], data)
			case op < 8: // read
				if len(model) == 0 {
					continue
				}
				off := rng.IntN(len(model))
				n := min(1+rng.IntN(16<<10), len(model)-off)
				history = append(history, fmt.Sprintf("%d %c read %#x+%#x", i, 'a'+who, off, n))
				buf := make([]byte, n)
				got, err := f.ReadAt(ctx, buf, int64(off))
				if (err != nil && !errors.Is(err, io.EOF)) || got != n || !bytes.Equal(buf, model[off:off+n]) {
					first := 0
					for first < got && buf[first] == model[off+first] {
						first++
					}
					t.Fatalf("read %d of %d bytes (%v); first difference at %#x: %#02x, the model says %#02x; the operations:\n%s",
						got, n, err, off+first, buf[min(first, got-1)], model[off+min(first, got-1)], strings.Join(history, "\n"))
				}
			case op < 9: // stat
				history = append(history, fmt.Sprintf("%d %c stat", i, 'a'+who))
				st, err := f.Stat(ctx)
				if err != nil || st.Size != uint64(len(model)) {
					t.Fatalf("stat: %+v, %v; the model's size is %#x; the operations:\n%s", st, err, len(model), strings.Join(history, "\n"))
				}
			default: // truncate
				size := rng.IntN(maxSize)
				history = append(history, fmt.Sprintf("%d %c truncate %#x -> %#x", i, 'a'+who, len(model), size))
				if err := f.Truncate(ctx, int64(size)); err != nil {
					t.Fatal(err)
				}
				if size < len(model) {
					model = model[:size]
				} else {
					model = append(model, make([]byte, size-len(model))...)
				}
			}
		}
		for _, f := range files {
			if err := f.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

var twoClientSeed = flag.Uint64("twoclients.seed", 0, "run TestE2ETwoClientsRandomOps with this seed only (0: seeds 1 to 8)")
