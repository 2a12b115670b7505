package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// A client blocklisted in the middle of a stream of writes: the writes
// the OSDs refuse (EBLOCKLISTED, rados.ErrBlocklisted) were not applied,
// those it was told succeeded were, and once every OSD has the map that
// fences it everything it sends is refused. Its watch ends at once (a
// notify does not wait for it), another client carries on untouched, and
// when the entry expires the same client is served again.
func TestBlocklistFencesAClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		ctx := context.Background()
		victim := c.connect(t, "client.victim")
		vio, oio := openIO(t, victim), openIO(t, c.connect(t, "client.other"))
		if err := oio.WriteFull(ctx, "hdr", []byte("h")); err != nil {
			t.Fatal(err)
		}
		var n notes
		if _, err := vio.Watch(ctx, "hdr", n.handler("victim")); err != nil {
			t.Fatal(err)
		}
		// The victim's instance address as the OSDs see it: its memnet
		// host, port 0 (a client listens on none) and its nonce.
		addr := fmt.Sprintf("client.victim:0/%d", victim.Nonce())

		const before, after = 48, 16
		var comps []*rados.Completion
		write := func(i int) {
			comps = append(comps, vio.WriteFullAsync(ctx, fmt.Sprintf("obj-%d", i), []byte(fmt.Sprintf("w%d", i))))
		}
		for i := range before {
			write(i)
			if i == before/2 {
				// Half the stream is in flight or queued when the
				// monitors fence the client.
				c.Run("osd blocklist add", "addr", addr, "expire", "60")
			}
		}
		fence := c.Epoch()
		c.WaitForEpoch(fence)
		for i := before; i < before+after; i++ {
			write(i)
		}
		refused := 0
		for i, comp := range comps {
			err := comp.Wait(ctx)
			name := fmt.Sprintf("obj-%d", i)
			got, rerr := oio.Read(ctx, name, 0, 16)
			switch {
			case err == nil:
				if rerr != nil || string(got) != fmt.Sprintf("w%d", i) {
					t.Errorf("%s: acknowledged, then read %q, %v", name, got, rerr)
				}
			case errors.Is(err, rados.ErrBlocklisted):
				refused++
				if !errors.Is(rerr, rados.ErrNotFound) {
					t.Errorf("%s: refused (%v), yet applied: read %q, %v", name, err, got, rerr)
				}
				if !strings.Contains(err.Error(), "blocklist") || !strings.Contains(err.Error(), "EBLOCKLISTED") {
					t.Errorf("%s: the error does not say what happened: %v", name, err)
				}
			default:
				t.Errorf("%s: %v, want success or rados.ErrBlocklisted", name, err)
			}
			if i >= before && !errors.Is(err, rados.ErrBlocklisted) {
				t.Errorf("%s, sent after every OSD had epoch %d which fences the client: %v", name, fence, err)
			}
		}
		t.Logf("refused %d of %d", refused, len(comps))
		if refused < after {
			t.Fatalf("%d writes refused, want at least the %d sent after the fence", refused, after)
		}

		// Another client is served; a notify does not wait for the
		// fenced watcher, whose watch ended with the map.
		if err := oio.WriteFull(ctx, "other", []byte("fine")); err != nil {
			t.Fatalf("another client's write: %v", err)
		}
		start := time.Now()
		res, err := oio.Notify(ctx, "hdr", []byte("ping"), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Acks) != 0 || time.Since(start) >= 30*time.Second {
			t.Errorf("notify after the fence: %+v after %v, want no ack and no wait for the fenced watcher", res, time.Since(start))
		}
		if got := n.payloads(); len(got) != 0 {
			t.Errorf("the fenced watcher received notifies: %q", got)
		}
		if ws, err := oio.ListWatchers(ctx, "hdr"); err != nil || len(ws) != 0 {
			t.Errorf("watchers after the fence: %v, %v", ws, err)
		}
		if _, err := vio.Watch(ctx, "hdr", n.handler("again")); !errors.Is(err, rados.ErrBlocklisted) {
			t.Errorf("a new watch of the fenced client: %v", err)
		}

		// The entry expires (virtual time): the same instance is served.
		time.Sleep(61 * time.Second)
		// Meanwhile the fenced watcher's next ping was refused: its
		// handler was told the watch is lost, and why.
		if lost := n.lost(); len(lost) != 1 || !errors.Is(lost[0], rados.ErrNotConnected) || !errors.Is(lost[0], rados.ErrBlocklisted) {
			t.Errorf("the fenced watcher's handler heard %v, want one loss for ErrBlocklisted", lost)
		}
		if err := vio.WriteFull(ctx, "later", []byte("again")); err != nil {
			t.Fatalf("a write after the entry expired: %v", err)
		}
		if got := c.Map().IsBlocklisted(addr, time.Now()); got {
			t.Fatalf("%s still blocklisted after its expiry", addr)
		}
	})
}

// A daemon that reaches the OSDs through a rados.Conn (an MDS) gives it
// its listening messenger's nonce and port: the fence the monitors put
// on the address it advertises (ADDR/NONCE, as the MDS-map service
// fences a failed MDS) stops that Conn's writes; another instance on the
// same host is not touched.
func TestBlocklistFencesADaemonsClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		ctx := context.Background()
		var mons []string
		for _, mi := range c.monmap.Mons {
			mons = append(mons, mi.Name+"="+mi.Addr)
		}
		connect := func(nonce uint64) *rados.IOContext {
			conn, err := rados.Connect(ctx, rados.Config{Mons: mons, Name: "mds.a", Auth: "none", Network: c.network("mds-a"),
				Logger: Logger("mds.a"), Seed: 5, Nonce: nonce, Port: 6800})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			return openIO(t, conn)
		}
		mds, restarted := connect(4242), connect(4343)
		if err := mds.WriteFull(ctx, "journal", []byte("1")); err != nil {
			t.Fatal(err)
		}
		c.Run("osd blocklist add", "addr", "mds-a:6800/4242", "expire", "86400")
		c.WaitForEpoch(c.Epoch())
		if err := mds.WriteFull(ctx, "journal", []byte("2")); !errors.Is(err, rados.ErrBlocklisted) {
			t.Fatalf("the fenced MDS's write: %v", err)
		}
		if err := restarted.WriteFull(ctx, "journal", []byte("3")); err != nil {
			t.Fatalf("the new incarnation's write: %v", err)
		}
		if got, err := restarted.Read(ctx, "journal", 0, 0); err != nil || string(got) != "3" {
			t.Fatalf("journal: %q, %v", got, err)
		}
	})
}

// A client fenced by its instance name (ENTITY/INCARNATION, what an rbd
// lock holder records) has its ops refused wherever it connects from;
// another process of the same entity is served.
func TestBlocklistFencesAnInstanceByName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		ctx := context.Background()
		victim := c.connect(t, "client.same")
		other := c.connect(t, "client.same")
		vio, oio := openIO(t, victim), openIO(t, other)
		if err := vio.WriteFull(ctx, "before", []byte("ok")); err != nil {
			t.Fatal(err)
		}
		c.Run("osd blocklist add", "addr", victim.Instance(), "expire", "60")
		c.WaitForEpoch(c.Epoch())
		if err := vio.WriteFull(ctx, "after", []byte("no")); !errors.Is(err, rados.ErrBlocklisted) {
			t.Fatalf("a write of the fenced instance %s: %v, want rados.ErrBlocklisted", victim.Instance(), err)
		}
		if _, err := oio.Read(ctx, "after", 0, 8); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("the refused write was applied: %v", err)
		}
		if err := oio.WriteFull(ctx, "other", []byte("fine")); err != nil {
			t.Fatalf("another process of the same entity: %v", err)
		}
	})
}
