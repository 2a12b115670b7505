package sim

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/rados"
)

// notes collects the notifies a watch's handler received.
type notes struct {
	mu   sync.Mutex
	got  [][]byte
	errs []error
}

func (n *notes) handler(reply string) rados.WatchHandler {
	return func(ev rados.WatchEvent) []byte {
		n.mu.Lock()
		defer n.mu.Unlock()
		if ev.Err != nil {
			n.errs = append(n.errs, ev.Err)
			return nil
		}
		n.got = append(n.got, ev.Payload)
		return []byte(reply)
	}
}

func (n *notes) lost() []error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.errs)
}

func (n *notes) payloads() [][]byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.got)
}

func openIO(t *testing.T, conn *rados.Conn) *rados.IOContext {
	t.Helper()
	io, err := conn.OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	return io
}

// A watch in one client, a notify from another: the payload reaches the
// watcher, its reply reaches the notifier; listwatchers shows the watch
// until unwatch.
func TestWatchNotifyRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		ctx := context.Background()
		wio, nio := openIO(t, c.connect(t, "client.watcher")), openIO(t, c.connect(t, "client.notifier"))
		if err := nio.WriteFull(ctx, "hdr", []byte("v1")); err != nil {
			t.Fatal(err)
		}
		if _, err := wio.Watch(ctx, "missing", func(rados.WatchEvent) []byte { return nil }); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("watch of a missing object: %v", err)
		}
		if _, err := nio.Notify(ctx, "missing", nil, time.Second); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("notify of a missing object: %v", err)
		}
		if _, err := nio.ListWatchers(ctx, "missing"); !errors.Is(err, rados.ErrNotFound) {
			t.Fatalf("listwatchers of a missing object: %v", err)
		}
		var n notes
		w, err := wio.Watch(ctx, "hdr", n.handler("seen"))
		if err != nil {
			t.Fatal(err)
		}
		ws, err := nio.ListWatchers(ctx, "hdr")
		if err != nil || len(ws) != 1 || ws[0].Client != "client.watcher" || ws[0].Cookie != w.Cookie() {
			t.Fatalf("listwatchers: %+v, %v", ws, err)
		}
		res, err := nio.Notify(ctx, "hdr", []byte("changed"), 5*time.Second)
		if err != nil || len(res.Acks) != 1 || string(res.Acks[0].Payload) != "seen" || len(res.TimedOut) != 0 {
			t.Fatalf("notify: %+v, %v", res, err)
		}
		if got := n.payloads(); len(got) != 1 || string(got[0]) != "changed" {
			t.Fatalf("watcher got %q", got)
		}
		if err := w.Unwatch(ctx); err != nil {
			t.Fatal(err)
		}
		if ws, err := nio.ListWatchers(ctx, "hdr"); err != nil || len(ws) != 0 {
			t.Fatalf("listwatchers after unwatch: %+v, %v", ws, err)
		}
		if res, err := nio.Notify(ctx, "hdr", []byte("nobody"), time.Second); err != nil || len(res.Acks)+len(res.TimedOut) != 0 {
			t.Fatalf("notify without watchers: %+v, %v", res, err)
		}
	})
}

// Two notifies reach a watcher together: its handler gets the second
// without waiting for the first's ack to be answered (a round trip to
// the primary), so under a stream of notifies (the kv store's wake-ups)
// deliveries do not queue behind acks. Every message here takes one hop
// of virtual time; acking before delivering the next made the gap two.
func TestNotifiesDoNotWaitForAcks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const hop = 10 * time.Millisecond
		c, _ := threeOSDsWith(t, Options{Net: memnet.Config{Seed: 1, MinDelay: hop, MaxDelay: hop}})
		ctx := context.Background()
		wio := openIO(t, c.connect(t, "client.watcher"))
		notifiers := []*rados.IOContext{openIO(t, c.connect(t, "client.n1")), openIO(t, c.connect(t, "client.n2"))}
		if err := notifiers[0].WriteFull(ctx, "hdr", []byte("v1")); err != nil {
			t.Fatal(err)
		}
		if _, err := notifiers[1].Stat(ctx, "hdr"); err != nil { // its session to the primary is up
			t.Fatal(err)
		}
		var mu sync.Mutex
		var at []time.Time
		w, err := wio.Watch(ctx, "hdr", func(rados.WatchEvent) []byte {
			mu.Lock()
			defer mu.Unlock()
			at = append(at, time.Now())
			return []byte("seen")
		})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, n := range notifiers {
			wg.Go(func() {
				if res, err := n.Notify(ctx, "hdr", []byte("changed"), 5*time.Second); err != nil || len(res.Acks) != 1 || string(res.Acks[0].Payload) != "seen" {
					t.Errorf("notify: %+v, %v", res, err)
				}
			})
		}
		wg.Wait()
		mu.Lock()
		got := slices.Clone(at)
		mu.Unlock()
		if len(got) != 2 {
			t.Fatalf("%d deliveries, want 2", len(got))
		}
		if gap := got[1].Sub(got[0]); gap >= hop {
			t.Fatalf("the second notify was delivered %v after the first (a hop is %v): it waited for the first's ack", gap, hop)
		}
		if err := w.Unwatch(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// The primary fails between the watch and the notify: the new primary
// knows the watch from the object, the client reconnects it, and the
// notify reaches the watcher.
func TestWatchSurvivesPrimaryFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.Run("osd set", "key", "noout")
		ctx := context.Background()
		wio, nio := openIO(t, c.connect(t, "client.watcher")), openIO(t, c.connect(t, "client.notifier"))
		if err := nio.WriteFull(ctx, "hdr", []byte("v1")); err != nil {
			t.Fatal(err)
		}
		var n notes
		if _, err := wio.Watch(ctx, "hdr", n.handler("ok")); err != nil {
			t.Fatal(err)
		}
		_, _, mp := place(t, c, "hdr")
		c.StopOSD(mp.ActingPrimary)
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		if _, _, now := place(t, c, "hdr"); now.ActingPrimary == mp.ActingPrimary {
			t.Fatalf("the primary did not move: %v", now)
		}
		res, err := nio.Notify(ctx, "hdr", []byte("after failover"), 10*time.Second)
		if err != nil || len(res.Acks) != 1 || res.Acks[0].Client != "client.watcher" || string(res.Acks[0].Payload) != "ok" {
			t.Fatalf("notify after failover: %+v, %v", res, err)
		}
		if got := n.payloads(); len(got) != 1 || string(got[0]) != "after failover" {
			t.Fatalf("watcher got %q", got)
		}
		if len(n.errs) != 0 {
			t.Fatalf("watch errors: %v", n.errs)
		}
	})
}

// A watcher that dies (its client goes away without unwatching) is
// removed after the watch timeout: a notify waiting for it reports it
// timed out, and the object no longer lists it.
func TestDeadWatcherTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		ctx := context.Background()
		dead := c.connect(t, "client.dead")
		wio, dio, nio := openIO(t, c.connect(t, "client.live")), openIO(t, dead), openIO(t, c.connect(t, "client.notifier"))
		if err := nio.WriteFull(ctx, "hdr", []byte("v1")); err != nil {
			t.Fatal(err)
		}
		var live, gone notes
		if _, err := wio.Watch(ctx, "hdr", live.handler("live")); err != nil {
			t.Fatal(err)
		}
		if _, err := dio.Watch(ctx, "hdr", gone.handler("never")); err != nil {
			t.Fatal(err)
		}
		dead.Close()
		start := time.Now()
		res, err := nio.Notify(ctx, "hdr", []byte("anyone?"), time.Minute)
		took := time.Since(start)
		if !errors.Is(err, rados.ErrTimedOut) || len(res.Acks) != 1 || res.Acks[0].Client != "client.live" ||
			len(res.TimedOut) != 1 || res.TimedOut[0].Client != "client.dead" {
			t.Fatalf("notify: %+v, %v", res, err)
		}
		// The dead watch expires 30 s (osd_client_watch_timeout) after its
		// session closed, before the notify's minute is up.
		if took < 29*time.Second || took > 31*time.Second {
			t.Fatalf("the notify took %v, want the watch timeout", took)
		}
		synctest.Wait() // the OSD's removal of the record
		ws, err := nio.ListWatchers(ctx, "hdr")
		if err != nil || len(ws) != 1 || ws[0].Client != "client.live" {
			t.Fatalf("listwatchers: %+v, %v", ws, err)
		}
	})
}

// A watcher whose handler does not answer within the notify's timeout is
// reported timed out; its watch stays, and it answers the next notify.
func TestSlowWatcherTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		ctx := context.Background()
		fio, sio, nio := openIO(t, c.connect(t, "client.fast")), openIO(t, c.connect(t, "client.slow")), openIO(t, c.connect(t, "client.notifier"))
		if err := nio.WriteFull(ctx, "hdr", []byte("v1")); err != nil {
			t.Fatal(err)
		}
		var fast notes
		if _, err := fio.Watch(ctx, "hdr", fast.handler("fast")); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		first := true
		if _, err := sio.Watch(ctx, "hdr", func(ev rados.WatchEvent) []byte {
			if first {
				first = false
				<-release
			}
			return []byte("slow")
		}); err != nil {
			t.Fatal(err)
		}
		res, err := nio.Notify(ctx, "hdr", []byte("one"), 3*time.Second)
		if !errors.Is(err, rados.ErrTimedOut) || len(res.Acks) != 1 || string(res.Acks[0].Payload) != "fast" ||
			len(res.TimedOut) != 1 || res.TimedOut[0].Client != "client.slow" {
			t.Fatalf("notify: %+v, %v", res, err)
		}
		close(release)
		res, err = nio.Notify(ctx, "hdr", []byte("two"), 3*time.Second)
		if err != nil || len(res.Acks) != 2 || !bytes.Equal(res.Acks[1].Payload, []byte("slow")) {
			t.Fatalf("second notify: %+v, %v", res, err)
		}
	})
}

// The watch is persisted with the object: after the primary fails, the
// new one knows the watch of a client that never reconnects, lists it,
// waits for it in a notify, and removes it once its timeout passes.
func TestWatchPersistsAcrossFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.Run("osd set", "key", "noout")
		ctx := context.Background()
		dead := c.connect(t, "client.dead")
		dio, nio := openIO(t, dead), openIO(t, c.connect(t, "client.notifier"))
		if err := nio.WriteFull(ctx, "hdr", []byte("v1")); err != nil {
			t.Fatal(err)
		}
		var gone notes
		if _, err := dio.Watch(ctx, "hdr", gone.handler("never")); err != nil {
			t.Fatal(err)
		}
		dead.Close()
		_, _, mp := place(t, c, "hdr")
		c.StopOSD(mp.ActingPrimary)
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		ws, err := nio.ListWatchers(ctx, "hdr")
		if err != nil || len(ws) != 1 || ws[0].Client != "client.dead" {
			t.Fatalf("listwatchers on the new primary: %+v, %v", ws, err)
		}
		res, err := nio.Notify(ctx, "hdr", []byte("anyone?"), time.Minute)
		if !errors.Is(err, rados.ErrTimedOut) || len(res.Acks) != 0 || len(res.TimedOut) != 1 {
			t.Fatalf("notify: %+v, %v", res, err)
		}
		synctest.Wait()
		if ws, err := nio.ListWatchers(ctx, "hdr"); err != nil || len(ws) != 0 {
			t.Fatalf("listwatchers after the timeout: %+v, %v", ws, err)
		}
	})
}

// A watch outlives a time its PG cannot serve ops that is longer than the
// watch timeout (chaos seed 89): the primary stays, its replicas are
// down, so the acting set is below min_size and the watcher's pings wait
// unanswered. As Ceph's primary does not time a watch out while its PG is
// not active, and gives each watch its timeout again at activation, the
// watch holds once the replicas are back: the next notify reaches it and
// the watcher is never told it was lost.
func TestWatchOutlivesInactivePG(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		c.Run("osd set", "key", "noout")
		ctx := context.Background()
		wio, nio := openIO(t, c.connect(t, "client.watcher")), openIO(t, c.connect(t, "client.notifier"))
		if err := nio.WriteFull(ctx, "hdr", []byte("v1")); err != nil {
			t.Fatal(err)
		}
		var n notes
		w, err := wio.Watch(ctx, "hdr", n.handler("ok"))
		if err != nil {
			t.Fatal(err)
		}
		_, _, mp := place(t, c, "hdr")
		var replicas []int32
		for _, id := range mp.Acting {
			if id != mp.ActingPrimary {
				replicas = append(replicas, id)
			}
		}
		for _, id := range replicas {
			c.StopOSD(id)
		}
		c.WaitForEpoch(c.Epoch())
		synctest.Wait()
		if _, _, now := place(t, c, "hdr"); now.ActingPrimary != mp.ActingPrimary || len(now.Acting) != 1 {
			t.Fatalf("want the primary alone in the acting set, have %v", now)
		}
		time.Sleep(3 * defaultWatchTimeout) // the PG inactive for three watch timeouts
		synctest.Wait()
		for _, id := range replicas {
			c.StartOSD(id)
		}
		c.settle(t, "replicas back")
		res, err := nio.Notify(ctx, "hdr", []byte("after the stall"), 10*time.Second)
		if err != nil || len(res.Acks) != 1 || res.Acks[0].Cookie != w.Cookie() || string(res.Acks[0].Payload) != "ok" {
			t.Fatalf("notify after the PG was inactive for %v: %+v, %v (watcher told: %v)", 3*defaultWatchTimeout, res, err, n.lost())
		}
		if lost := n.lost(); lost != nil || w.Err() != nil {
			t.Fatalf("the watch was lost: %v", lost)
		}
	})
}

// defaultWatchTimeout is the OSDs' osd_client_watch_timeout here.
const defaultWatchTimeout = 30 * time.Second
