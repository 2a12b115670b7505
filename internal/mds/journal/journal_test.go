package journal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	. "github.com/cuttlestore/cuttle/internal/mds/journal"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper/layout"
)

const ino = 0x200 // rank 0's journal, as Ceph numbers it

// metaPool starts a monitor and three OSDs with a pool "metadata" of size
// 3 and returns an I/O context on it.
func metaPool(t *testing.T) *rados.IOContext {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 5, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "metadata", "pg_num", "8", "size", "3")
	c.WaitForEpoch(c.Epoch())
	io, err := c.Client("client.mds").OpenIOContext("metadata")
	if err != nil {
		t.Fatal(err)
	}
	return io
}

// smallLayouts stripe the journal over 64 KiB objects, so that entries
// cross objects often.
func smallLayouts(pool int64) []layout.Layout {
	return []layout.Layout{
		{ObjectSize: 64 << 10, StripeUnit: 64 << 10, StripeCount: 1, Pool: pool},
		{ObjectSize: 128 << 10, StripeUnit: 64 << 10, StripeCount: 2, Pool: pool},
	}
}

func payload(rng *rand.Rand, tag string) []byte {
	b := make([]byte, rng.IntN(20<<10))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return append([]byte(tag+":"), b...)
}

// replayAll recovers the journal and returns its entries' payloads.
func replayAll(t *testing.T, io *rados.IOContext) (*Writer, ReplayResult, [][]byte) {
	t.Helper()
	var got [][]byte
	w, res, err := Recover(context.Background(), Config{IO: io, Ino: ino}, func(e Entry) error {
		got = append(got, e.Payload)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w, res, got
}

func equalEntries(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: entry %d differs (%q..., want %q...)", what, i, got[i][:min(12, len(got[i]))], want[i][:min(12, len(want[i]))])
		}
	}
}

// Every flushed entry is replayed, in order, whatever the layout.
func TestAppendFlushReplay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := metaPool(t)
		ctx := context.Background()
		for li, l := range smallLayouts(io.PoolID()) {
			rng := rand.New(rand.NewPCG(uint64(li), 2))
			if li > 0 {
				removeJournal(t, io)
			}
			w, err := Create(ctx, Config{IO: io, Ino: ino, Layout: l})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Create(ctx, Config{IO: io, Ino: ino, Layout: l}); !errors.Is(err, rados.ErrExists) {
				t.Fatalf("second create: %v", err)
			}
			var want [][]byte
			for i := range 60 {
				p := payload(rng, fmt.Sprint(i))
				pos, end, err := w.Append(p)
				if err != nil || end-pos != FrameLen(len(p)) {
					t.Fatal(pos, end, err)
				}
				want = append(want, p)
				if rng.IntN(4) == 0 {
					if err := w.Flush(ctx); err != nil {
						t.Fatal(err)
					}
					if w.SafePos() != end {
						t.Fatalf("safe %d after a flush to %d", w.SafePos(), end)
					}
				}
			}
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			_, res, got := replayAll(t, io)
			equalEntries(t, l.String(), got, want)
			if res.Stop.Torn || res.End != w.SafePos() || res.Header.ExpirePos != l.Period() {
				t.Fatalf("%v: replay %+v stop %v, writer safe at %d", l, res, res.Stop, w.SafePos())
			}
		}
	})
}

// removeJournal removes the journal with Remove, and checks that no
// object is left.
func removeJournal(t *testing.T, io *rados.IOContext) {
	t.Helper()
	if err := Remove(context.Background(), io, ino); err != nil {
		t.Fatal(err)
	}
	for e, err := range io.Objects(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		t.Fatalf("object %s left by Remove", e.Name)
	}
}

// Flushes complete in order: a FlushAsync's callback runs after every
// earlier one's, once the stream is committed up to its end.
func TestFlushAsyncOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := metaPool(t)
		ctx := context.Background()
		w, err := Create(ctx, Config{IO: io, Ino: ino, Layout: smallLayouts(io.PoolID())[1]})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(9, 9))
		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		for i := range 20 {
			_, end, err := w.Append(payload(rng, fmt.Sprint(i)))
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			w.FlushAsync(ctx, func(err error) {
				defer wg.Done()
				if err != nil {
					t.Error(err)
				}
				if safe := w.SafePos(); safe < end {
					t.Errorf("flush %d called back at safe %d, below its end %d", i, safe, end)
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
			})
		}
		wg.Wait()
		for i, v := range order {
			if v != i {
				t.Fatalf("callbacks in order %v", order)
			}
		}
	})
}

// crash stops a writer as if its MDS were killed mid-flush: of the
// entries appended since the last flush, a random part of each object
// write lands (a prefix of it, or none of it).
func crash(t *testing.T, rng *rand.Rand, io *rados.IOContext, w *Writer) {
	t.Helper()
	data, pos, l := w.KillForTest()
	for _, x := range l.FileToExtents(pos, uint64(len(data))) {
		if rng.IntN(3) == 0 {
			continue // this object write never happened
		}
		var buf []byte
		for _, b := range x.Buffer {
			buf = append(buf, data[b.Offset:b.Offset+b.Length]...)
		}
		buf = buf[:rng.IntN(len(buf)+1)]
		if err := io.Write(context.Background(), layout.ObjectName(ino, x.ObjectNo), buf, x.Offset); err != nil {
			t.Fatal(err)
		}
	}
}

// Crash points: writers killed mid-append, over and over. Every entry
// flushed before a crash is replayed; of those appended and not flushed,
// a prefix may be replayed, intact; nothing else ever is (no torn entry,
// no stale entry of an earlier writer behind a later one's).
func TestCrashPointsReplay(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				io := metaPool(t)
				ctx := context.Background()
				rng := rand.New(rand.NewPCG(seed, 77))
				l := smallLayouts(io.PoolID())[seed%2]
				w, err := Create(ctx, Config{IO: io, Ino: ino, Layout: l})
				if err != nil {
					t.Fatal(err)
				}
				var durable [][]byte // what must be replayed
				for round := range 4 {
					for i := range 1 + rng.IntN(8) {
						p := payload(rng, fmt.Sprintf("r%d.%d", round, i))
						if _, _, err := w.Append(p); err != nil {
							t.Fatal(err)
						}
						durable = append(durable, p)
					}
					if err := w.Flush(ctx); err != nil {
						t.Fatal(err)
					}
					var lost [][]byte
					for i := range 1 + rng.IntN(6) {
						p := payload(rng, fmt.Sprintf("r%d.lost%d", round, i))
						if _, _, err := w.Append(p); err != nil {
							t.Fatal(err)
						}
						lost = append(lost, p)
					}
					crash(t, rng, io, w)
					var res ReplayResult
					var got [][]byte
					w, res, got = replayAll(t, io)
					if len(got) < len(durable) {
						t.Fatalf("round %d: %d entries replayed, %d were flushed", round, len(got), len(durable))
					}
					equalEntries(t, "flushed", got[:len(durable)], durable)
					extra := got[len(durable):]
					if len(extra) > len(lost) {
						t.Fatalf("round %d: %d unflushed entries replayed of %d", round, len(extra), len(lost))
					}
					equalEntries(t, "unflushed prefix", extra, lost[:len(extra)])
					// What was replayed is now part of the journal.
					durable = got
					t.Logf("round %d: %d entries, %d of %d unflushed survived, stop at %d: %v", round, len(got), len(extra), len(lost), res.End, res.Stop)
				}
			})
		})
	}
}

// A writer killed mid-append: the entry it was writing landed in part
// (its first object's share), so replay stops there, reports a torn entry
// and where; the next writer overwrites it.
func TestKillWriterMidAppend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := metaPool(t)
		ctx := context.Background()
		l := smallLayouts(io.PoolID())[0]
		w, err := Create(ctx, Config{IO: io, Ino: ino, Layout: l})
		if err != nil {
			t.Fatal(err)
		}
		var want [][]byte
		for i := range 5 {
			p := bytes.Repeat([]byte{byte('a' + i)}, 30<<10)
			w.Append(p)
			want = append(want, p)
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		// The sixth entry spans two objects; only the first object's
		// write lands, and only half of it.
		big := bytes.Repeat([]byte{'z'}, 60<<10)
		pos, end, _ := w.Append(big)
		frame := AppendFrame(nil, pos, 1, big)
		first := l.FileToExtents(pos, end-pos)[0]
		if err := io.Write(ctx, layout.ObjectName(ino, first.ObjectNo), frame[:first.Length/2], first.Offset); err != nil {
			t.Fatal(err)
		}
		w2, res, got := replayAll(t, io)
		equalEntries(t, "after the kill", got, want)
		if res.End != pos || !res.Stop.Torn || !strings.Contains(res.Stop.Error(), fmt.Sprintf("torn entry at %d", pos)) {
			t.Fatalf("replay ended at %d (%v), want a torn entry at %d", res.End, res.Stop, pos)
		}
		if h := w2.Header(); h.Generation != 2 || h.WritePos != pos {
			t.Fatalf("recovered header %+v", h)
		}
		next := []byte("after recovery")
		if p2, _, _ := w2.Append(next); p2 != pos {
			t.Fatalf("next entry at %d, want the torn one's %d", p2, pos)
		}
		if err := w2.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		_, res, got = replayAll(t, io)
		equalEntries(t, "after the next writer", got, append(want, next))
		if !res.Stop.Torn {
			t.Fatalf("the rest of the torn entry should stop replay as torn: %v", res.Stop)
		}
	})
}

// The stale-entry case: a writer's flush of entry A never landed but
// the next one's, of B, did; replay stops at A. The next writer's entry
// C, exactly as long as A, ends where B starts: B is a valid frame there,
// and only its older generation keeps it out of the journal.
func TestStaleEntryAfterTakeover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := metaPool(t)
		ctx := context.Background()
		w, err := Create(ctx, Config{IO: io, Ino: ino, Layout: smallLayouts(io.PoolID())[0]})
		if err != nil {
			t.Fatal(err)
		}
		w.Append([]byte("flushed"))
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		aPos, aEnd, _ := w.Append([]byte("entry A"))
		bPos, _, _ := w.Append([]byte("entry B"))
		frames := w.PendingForTest()
		// Only B lands.
		if err := w.WriteRawForTest(ctx, frames[aEnd-aPos:], bPos); err != nil {
			t.Fatal(err)
		}
		w2, res, got := replayAll(t, io)
		equalEntries(t, "with A lost", got, [][]byte{[]byte("flushed")})
		if res.End != aPos {
			t.Fatalf("replay ended at %d, want %d", res.End, aPos)
		}
		if p, e, _ := w2.Append([]byte("entry C")); p != aPos || e != bPos {
			t.Fatalf("C at [%d,%d), want [%d,%d)", p, e, aPos, bPos)
		}
		if err := w2.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		_, res, got = replayAll(t, io)
		equalEntries(t, "after C", got, [][]byte{[]byte("flushed"), []byte("entry C")})
		if res.End != bPos || !strings.Contains(res.Stop.Reason, "stale") {
			t.Fatalf("replay ended at %d (%v), want at B's %d as stale", res.End, res.Stop, bPos)
		}
	})
}

// Trim removes the objects wholly below the expire position, and replay
// starts there.
func TestTrim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := metaPool(t)
		ctx := context.Background()
		for li, l := range smallLayouts(io.PoolID()) {
			if li > 0 {
				removeJournal(t, io)
			}
			w, err := Create(ctx, Config{IO: io, Ino: ino, Layout: l})
			if err != nil {
				t.Fatal(err)
			}
			var payloads [][]byte
			var starts []uint64
			for i := range 40 {
				p := bytes.Repeat([]byte{byte(i)}, 10<<10)
				pos, _, _ := w.Append(p)
				payloads, starts = append(payloads, p), append(starts, pos)
			}
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := w.Trim(ctx, w.SafePos()+1); err == nil {
				t.Fatal("trim past the safe position")
			}
			k := 27
			if err := w.Trim(ctx, starts[k]); err != nil {
				t.Fatal(err)
			}
			for no := uint64(0); no < l.ObjectCount(w.SafePos()); no++ {
				_, err := io.Stat(ctx, layout.ObjectName(ino, no))
				gone := errors.Is(err, rados.ErrNotFound)
				below := no >= uint64(l.StripeCount) && l.FileOffset(no, uint64(l.ObjectSize)-1) < starts[k]
				if no == 0 && gone {
					t.Fatalf("%v: the header object is gone", l)
				}
				if no >= uint64(l.StripeCount) && gone != below {
					t.Fatalf("%v: object %d gone %v (%v), wholly below the expire position %v", l, no, gone, err, below)
				}
			}
			if err := w.WriteHead(ctx); err != nil {
				t.Fatal(err)
			}
			_, res, got := replayAll(t, io)
			equalEntries(t, "after trim", got, payloads[k:])
			if res.Header.TrimmedPos <= l.Period() || res.Header.TrimmedPos > starts[k] {
				t.Fatalf("%v: trimmed position %d, expire %d", l, res.Header.TrimmedPos, starts[k])
			}
		}
	})
}

// A flushed entry that no longer reads back (below the header's write
// position) is damage, not a torn tail: recovery refuses the journal.
func TestDamagedJournal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := metaPool(t)
		ctx := context.Background()
		l := smallLayouts(io.PoolID())[0]
		w, err := Create(ctx, Config{IO: io, Ino: ino, Layout: l})
		if err != nil {
			t.Fatal(err)
		}
		var starts []uint64
		for i := range 10 {
			pos, _, _ := w.Append([]byte(fmt.Sprint("entry ", i)))
			starts = append(starts, pos)
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteHead(ctx); err != nil {
			t.Fatal(err)
		}
		no, off, _ := l.Locate(starts[4] + FrameLen(0))
		if err := io.Write(ctx, layout.ObjectName(ino, no), []byte{'X'}, off); err != nil {
			t.Fatal(err)
		}
		_, res, err := Recover(ctx, Config{IO: io, Ino: ino}, func(Entry) error { return nil })
		if !errors.Is(err, ErrDamaged) || res.End != starts[4] || !strings.Contains(err.Error(), fmt.Sprint(starts[4])) {
			t.Fatalf("recover of a damaged journal: %v (end %d)", err, res.End)
		}
	})
}

// A standby-replay follower reads what the writer flushes, as it is
// flushed; when the writer dies mid-append and another takes over, the
// follower goes on with the new writer's entries, never the torn or
// stale ones; and a trim past it is reported.
func TestFollower(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		io := metaPool(t)
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(4, 4))
		w, err := Create(ctx, Config{IO: io, Ino: ino, Layout: smallLayouts(io.PoolID())[1]})
		if err != nil {
			t.Fatal(err)
		}
		f, err := NewFollower(ctx, io, ino)
		if err != nil {
			t.Fatal(err)
		}
		var followed, written [][]byte
		collect := func(e Entry) error { followed = append(followed, e.Payload); return nil }
		for round := range 3 {
			for i := range 5 {
				p := payload(rng, fmt.Sprintf("r%d.%d", round, i))
				w.Append(p)
				written = append(written, p)
			}
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Poll(ctx, collect); err != nil {
				t.Fatal(err)
			}
			equalEntries(t, fmt.Sprint("round ", round), followed, written)
		}
		// The writer dies mid-append.
		for i := range 4 {
			w.Append(payload(rng, fmt.Sprint("lost", i)))
		}
		crash(t, rng, io, w)
		if _, err := f.Poll(ctx, collect); err != nil {
			t.Fatal(err)
		}
		w2, _, replayed := replayAll(t, io)
		equalEntries(t, "follower against replay", followed, replayed)
		written = replayed
		for i := range 5 {
			p := payload(rng, fmt.Sprint("new", i))
			w2.Append(p)
			written = append(written, p)
		}
		if err := w2.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		// Follow (polling on a clock) until it has caught up.
		fctx, cancel := context.WithCancel(ctx)
		err = f.Follow(fctx, clock.Real(), time.Second, func(e Entry) error {
			collect(e)
			if len(followed) == len(written) {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		equalEntries(t, "after the takeover", followed, written)
		// Trimmed past the follower.
		w2.Append([]byte("one more"))
		if err := w2.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := w2.Trim(ctx, w2.SafePos()); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Poll(ctx, collect); !errors.Is(err, ErrTrimmedPast) {
			t.Fatalf("poll after a trim past the follower: %v", err)
		}
	})
}
