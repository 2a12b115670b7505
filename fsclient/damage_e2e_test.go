package fsclient

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
)

// A directory whose fragment object is damaged (an omap value written
// through RADOS that does not decode), read by an MDS that did not have
// it cached (a standby that took over), answers EIO to lookups, listings
// and creates in it; its siblings, the root and the daemon go on.
func TestE2EDamagedDirectoryIsEIO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fc := newFSCluster(t)
		fc.startMDS("b", 2)
		fc.waitStat("cephfs:1 {0=a=up:active} 1 up:standby\n")
		ctx := context.Background()
		conn := fc.c.Client("client.a")
		cl, err := Mount(ctx, conn, "cephfs", Options{Caller: &Caller{}}) // unmounted below, before the failover
		if err != nil {
			t.Fatal(err)
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range []string{"/bad", "/good"} {
			must(cl.Mkdir(ctx, d, 0o755))
			f, err := cl.Create(ctx, d+"/f", 0o644)
			must(err)
			must(f.Close(ctx))
		}
		st, err := cl.Stat(ctx, "/bad")
		must(err)
		must(cl.Close(ctx))
		meta, err := conn.OpenIOContext("cephfs_metadata")
		must(err)
		obj := mdtypes.DirfragObject(mdtypes.Ino(st.Ino), mdtypes.RootFrag)
		must(meta.SetOmap(ctx, obj, map[string][]byte{mdtypes.DentryKey("junk"): {0xde, 0xad}}))
		fc.stop["a"]()
		fc.waitStat("cephfs:1 {0=b=up:active}\n")

		cl2, _ := fc.mount("client.b")
		isEIO := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("%s in the damaged directory: %v, want EIO", what, err)
			}
		}
		_, err = cl2.ReadDir(ctx, "/bad")
		isEIO("readdir", err)
		_, err = cl2.Stat(ctx, "/bad/f")
		isEIO("stat", err)
		_, err = cl2.Create(ctx, "/bad/new", 0o644)
		isEIO("create", err)
		if _, err := cl2.Stat(ctx, "/"); err != nil {
			t.Errorf("stat of the root: %v", err)
		}
		if _, err := cl2.Stat(ctx, "/bad"); err != nil {
			t.Errorf("stat of the damaged directory itself (its inode is in the root): %v", err)
		}
		ents, err := cl2.ReadDir(ctx, "/good")
		if err != nil || len(ents) != 1 || ents[0].Name != "f" {
			t.Errorf("readdir of the sibling: %v %v", ents, err)
		}
		f, err := cl2.Create(ctx, "/good/new", 0o644)
		if err != nil {
			t.Fatalf("create in the sibling: %v", err)
		}
		must(f.Close(ctx))
		must(cl2.Mkdir(ctx, "/other", 0o755))
		// The damage reaches the monitors' health through b's beacons.
		for i := 0; ; i++ {
			h := fc.c.Run("health", "detail", "true").Text
			if strings.Contains(h, "MDS_DAMAGE") && strings.Contains(h, "mds.b(mds.0): Metadata damage detected: 1 objects") {
				break
			}
			if i == 100 {
				t.Fatalf("no MDS_DAMAGE after %d beacons:\n%s", i, h)
			}
			time.Sleep(100 * time.Millisecond) // virtual time: the beacons' pace
		}
		if got := fc.c.Run("mds stat").Text; got != "cephfs:1 {0=b=up:active}\n" {
			t.Errorf("the MDS after the damage: %q", got)
		}
	})
}
