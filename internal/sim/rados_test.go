package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// connect returns a rados client of the cluster over its memnet.
func (c *Cluster) connect(t *testing.T, name string) *rados.Conn {
	t.Helper()
	var mons []string
	for _, mi := range c.monmap.Mons {
		mons = append(mons, mi.Name+"="+mi.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := rados.Config{Mons: mons, Name: name, Auth: "none", Network: c.network(name), Logger: Logger(name), Seed: 7}
	if c.opts.Cephx {
		key, ok := c.keyring[adminName]
		if name != adminName.String() || !ok {
			key.Key = c.newKey(name, "allow r", "allow *")
		}
		cfg.Auth, cfg.Key = "cephx", key.Key.Base64()
	}
	conn, err := rados.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// The client library against real OSDs: every kind of op, and listing.
func TestRadosAgainstOSDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.app")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		if err := io.WriteFull(ctx, "doc", []byte("hello world")); err != nil {
			t.Fatal(err)
		}
		if err := io.Append(ctx, "doc", []byte("!")); err != nil {
			t.Fatal(err)
		}
		if b, err := io.Read(ctx, "doc", 6, 0); err != nil || string(b) != "world!" {
			t.Fatalf("read %q %v", b, err)
		}
		if err := io.SetXattr(ctx, "doc", "owner", []byte("ann")); err != nil {
			t.Fatal(err)
		}
		if v, err := io.GetXattr(ctx, "doc", "owner"); err != nil || string(v) != "ann" {
			t.Fatalf("xattr %q %v", v, err)
		}
		if err := io.SetOmap(ctx, "doc", map[string][]byte{"k1": []byte("v1"), "k2": []byte("v2")}); err != nil {
			t.Fatal(err)
		}
		kvs, more, err := io.GetOmapValues(ctx, "doc", "", "", 10)
		if err != nil || more || len(kvs) != 2 {
			t.Fatalf("omap %v %v %v", kvs, more, err)
		}
		st, err := io.Stat(ctx, "doc")
		if err != nil || st.Size != 12 {
			t.Fatalf("stat %+v %v", st, err)
		}
		if _, err := io.Read(ctx, "missing", 0, 0); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("read of a missing object: %v", err)
		}
		// ReadInto fills at most the buffer, fewer at the end; an empty
		// buffer still says whether the object exists.
		buf := make([]byte, 5)
		if n, err := io.ReadInto(ctx, "doc", 0, buf); err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("ReadInto = %q, %v", buf[:n], err)
		}
		if n, err := io.ReadInto(ctx, "doc", 9, buf); err != nil || string(buf[:n]) != "ld!" {
			t.Fatalf("ReadInto at the end = %q, %v", buf[:n], err)
		}
		if n, err := io.ReadInto(ctx, "doc", 0, nil); err != nil || n != 0 {
			t.Fatalf("ReadInto with no buffer = %d, %v", n, err)
		}
		for _, b := range [][]byte{nil, buf} {
			if _, err := io.ReadInto(ctx, "missing", 0, b); !errors.Is(err, rados.ErrNotFound) {
				t.Fatalf("ReadInto (%d bytes) of a missing object: %v", len(b), err)
			}
		}
		for i := range 40 {
			if err := io.WriteFull(ctx, fmt.Sprintf("obj-%02d", i), []byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		for _, err := range io.Objects(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 41 {
			t.Fatalf("listed %d objects, want 41", n)
		}
		if err := io.Delete(ctx, "doc"); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Stat(ctx, "doc"); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("stat after delete: %v", err)
		}
	})
}

// Writers keep going while the primary of their objects is stopped: the
// client resends to the new primary without the caller noticing, and
// every acknowledged write reads back.
func TestAcknowledgedWritesSurvivePrimaryLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.Run("osd set", "key", "noout")
		conn := c.connect(t, "client.app")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		_, _, mp := place(t, c, "w-0-0")
		victim := mp.ActingPrimary
		var (
			mu    sync.Mutex
			acked = map[string][]byte{}
			wg    sync.WaitGroup
		)
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 30 {
					name := fmt.Sprintf("w-%d-%d", w, i)
					data := bytes.Repeat([]byte{byte(w*31 + i)}, 100+i)
					if err := io.WriteFull(ctx, name, data); err != nil {
						t.Errorf("write %s: %v", name, err)
						return
					}
					mu.Lock()
					acked[name] = data
					mu.Unlock()
					if w == 0 && i == 10 {
						c.StopOSD(victim)
					}
				}
			}()
		}
		wg.Wait()
		if len(acked) != 120 {
			t.Fatalf("%d writes acknowledged, want 120", len(acked))
		}
		for name, want := range acked {
			got, err := io.Read(ctx, name, 0, 0)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: read %d bytes (%v), want %d", name, len(got), err, len(want))
			}
		}
	})
}

// Two completions: applied arrives while a replica holds its commit, and
// committed only once it lets go.
func TestRadosAppliedThenCommitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.app")
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		_, _, mp := place(t, c, "two-acks")
		slow := c.OSDs[mp.Acting[1]]
		slow.Gate.Hold()
		comp := io.WriteFullAsync(context.Background(), "two-acks", []byte("data"))
		if err := comp.WaitApplied(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case <-comp.Committed():
			t.Fatal("committed while a replica holds its commit")
		default:
		}
		slow.Gate.Open()
		if err := comp.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// newPoolCluster starts a cluster of one OSD per host in hosts with pool
// rbd (8 PGs, size 3, min_size minSize, confirmed when below a majority)
// and returns it with an I/O context on the pool.
func newPoolCluster(t *testing.T, opts Options, minSize int, hosts ...string) (*Cluster, *rados.IOContext) {
	t.Helper()
	c := New(t, opts)
	for _, h := range hosts {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "rbd", "pg_num", "8", "size", "3", "min_size", fmt.Sprint(minSize), "yes_i_really_mean_it", "true")
	c.WaitForEpoch(c.Epoch())
	synctest.Wait()
	io, err := c.connect(t, "client.app").OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	return c, io
}

// settle waits (in virtual time, up to ten minutes) until every PG is
// active+clean, and fails the test if they are not.
func (c *Cluster) settle(t *testing.T, what string) {
	t.Helper()
	c.WaitForEpoch(c.Epoch())
	for range 60 {
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if len(c.uncleanPGs()) == 0 {
			return
		}
	}
	t.Fatalf("%s: PGs not active+clean:\n%s", what, strings.Join(c.uncleanPGs(), "\n"))
}

// A compound write op's comparisons and assertions see the ops before
// them in the same op, as the OSD applies them all or none.
func TestRadosCompoundReadsOwnWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		conn := c.connect(t, "client.app")
		ctx := context.Background()
		io, err := conn.OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		op := func(build func(w *rados.WriteOp)) error {
			w := rados.NewWriteOp()
			build(w)
			return io.OperateWrite(ctx, "inode", w)
		}
		// An exclusive create, then a comparison on the new object.
		if err := op(func(w *rados.WriteOp) {
			w.Create(true)
			w.CmpXattr("state", rados.CmpEq, nil)
			w.SetXattr("state", []byte("a"))
			w.CmpXattr("state", rados.CmpEq, []byte("a"))
			w.SetOmap(map[string][]byte{"seq": []byte("7")})
			w.CmpOmap(rados.CmpEq, map[string][]byte{"seq": []byte("7")})
			w.WriteFull([]byte("v1"))
		}); err != nil {
			t.Fatalf("create and compare: %v", err)
		}
		// A comparison against the value an earlier op replaced fails the
		// whole op: nothing of it applies.
		if err := op(func(w *rados.WriteOp) {
			w.WriteFull([]byte("v2"))
			w.SetXattr("state", []byte("b"))
			w.CmpXattr("state", rados.CmpEq, []byte("a"))
		}); !errors.Is(err, rados.ErrCompareFailed) {
			t.Fatalf("compare with a replaced value: %v, want ErrCompareFailed", err)
		}
		if err := op(func(w *rados.WriteOp) {
			w.RmOmapKeys([]string{"seq"})
			w.CmpOmap(rados.CmpEq, map[string][]byte{"seq": []byte("7")})
		}); !errors.Is(err, rados.ErrCompareFailed) {
			t.Fatalf("compare with a removed key: %v, want ErrCompareFailed", err)
		}
		if err := op(func(w *rados.WriteOp) {
			w.Remove()
			w.AssertExists()
		}); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("assert after remove: %v, want ErrNotFound", err)
		}
		if v, err := io.GetXattr(ctx, "inode", "state"); err != nil || string(v) != "a" {
			t.Fatalf("state after failed ops %q %v", v, err)
		}
		if b, err := io.Read(ctx, "inode", 0, 0); err != nil || string(b) != "v1" {
			t.Fatalf("data after failed ops %q %v", b, err)
		}
		kvs, _, err := io.GetOmapValues(ctx, "inode", "", "", 10)
		if err != nil || len(kvs) != 1 {
			t.Fatalf("omap after failed ops %v %v", kvs, err)
		}
	})
}
