package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// The chaos test's snapshot workload (docs/SNAPSHOTS.md): a client of a
// pool of self-managed snapshots takes snapshots, writes, rolls back and
// removes snapshots while the faults run, and checks every read at a
// live snapshot; at the end every read at every live snapshot must give
// what the object held when the snapshot was taken.
//
// Writes that fail may or may not have been applied, so the model keeps,
// for the head and for each live snapshot, the set of versions the
// object may have (0: no object).

// chaosSnapObjects is how many objects the snapshot workload writes.
const chaosSnapObjects = 6

// snapObject is what the workload knows of one object: the versions the
// head may have, and the versions it may have had at each live snapshot.
type snapObject struct {
	name string
	head map[int]bool
	at   map[uint64]map[int]bool
	next int // the next version to write
}

func (o *snapObject) content(v int) []byte {
	return fmt.Appendf(nil, "%s snapped version %d", o.name, v)
}

// accepts reports whether a read's outcome is one of vs.
func (o *snapObject) accepts(vs map[int]bool, b []byte, err error) bool {
	if errors.Is(err, rados.ErrNotFound) {
		return vs[0]
	}
	if err != nil {
		return false
	}
	for v := range vs {
		if v != 0 && string(b) == string(o.content(v)) {
			return true
		}
	}
	return false
}

// snapWorkload is the client: its IOContext, objects and live
// snapshots (oldest first).
type snapWorkload struct {
	io   *rados.IOContext
	objs []*snapObject
	live []uint64
	seq  uint64
	ops  map[string]int
}

func newSnapWorkload(io *rados.IOContext) *snapWorkload {
	w := &snapWorkload{io: io, ops: map[string]int{}}
	for i := range chaosSnapObjects {
		w.objs = append(w.objs, &snapObject{name: fmt.Sprint("snapped-", i), head: map[int]bool{0: true}, at: map[uint64]map[int]bool{}, next: 1})
	}
	return w
}

// setContext gives the IOContext the live snapshots.
func (w *snapWorkload) setContext() error {
	snaps := slices.Clone(w.live)
	slices.Reverse(snaps)
	return w.io.SetSnapWriteContext(w.seq, snaps)
}

// run runs the workload until stop, reporting what it saw wrong.
func (w *snapWorkload) run(rng *rand.Rand, stop <-chan struct{}, report func(string, ...any)) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		w.step(ctx, rng, report)
		cancel()
		time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
	}
}

func (w *snapWorkload) step(ctx context.Context, rng *rand.Rand, report func(string, ...any)) {
	o := w.objs[rng.IntN(len(w.objs))]
	switch op := rng.IntN(20); {
	case op < 2 && len(w.live) < 4: // take a snapshot
		id, err := w.io.SelfManagedSnapCreate(ctx)
		if err != nil {
			return // no snapshot: nothing changes
		}
		w.seq = id
		w.live = append(w.live, id)
		for _, x := range w.objs {
			x.at[id] = maps.Clone(x.head)
		}
		if err := w.setContext(); err != nil {
			report("snap context %d %v: %v", w.seq, w.live, err)
		}
		w.ops["snap"]++
	case op < 3 && len(w.live) > 0: // remove one
		i := rng.IntN(len(w.live))
		id := w.live[i]
		if err := w.io.SelfManagedSnapRemove(ctx, id); err != nil {
			return
		}
		w.live = slices.Delete(w.live, i, i+1)
		for _, x := range w.objs {
			delete(x.at, id)
		}
		if err := w.setContext(); err != nil {
			report("snap context %d %v: %v", w.seq, w.live, err)
		}
		w.ops["rmsnap"]++
	case op < 5 && len(w.live) > 0: // roll back
		id := w.live[rng.IntN(len(w.live))]
		if err := w.io.Rollback(ctx, o.name, id); err != nil {
			for v := range o.at[id] {
				o.head[v] = true // may or may not have happened
			}
			return
		}
		o.head = maps.Clone(o.at[id])
		w.ops["rollback"]++
	case op < 9 && len(w.live) > 0: // read at a snapshot
		id := w.live[rng.IntN(len(w.live))]
		w.io.SetReadSnap(id)
		b, err := w.io.Read(ctx, o.name, 0, 0)
		w.io.SetReadSnap(rados.SnapHead)
		if err != nil && !errors.Is(err, rados.ErrNotFound) {
			return // a failure, not an answer
		}
		if !o.accepts(o.at[id], b, err) {
			report("%s at snap %d reads %q, %v; may be versions %v", o.name, id, b, err, sortedKeys(o.at[id]))
		}
		w.ops["snap read"]++
	case op < 10: // delete
		err := w.io.Delete(ctx, o.name)
		switch {
		case errors.Is(err, rados.ErrNotFound) && !o.head[0]:
			report("%s: delete says there is no object; may be versions %v", o.name, sortedKeys(o.head))
		case err == nil || errors.Is(err, rados.ErrNotFound):
			o.head = map[int]bool{0: true}
		default:
			o.head[0] = true
		}
		w.ops["delete"]++
	default: // write
		v := o.next
		o.next++
		if err := w.io.WriteFull(ctx, o.name, o.content(v)); err != nil {
			o.head[v] = true
			return
		}
		o.head = map[int]bool{v: true}
		w.ops["write"]++
	}
}

// verify reads every object at its head and every live snapshot.
func (w *snapWorkload) verify(ctx context.Context) []string {
	var bad []string
	for _, o := range w.objs {
		for _, id := range append(slices.Clone(w.live), rados.SnapHead) {
			want := o.head
			if id != rados.SnapHead {
				want = o.at[id]
			}
			w.io.SetReadSnap(id)
			b, err := w.io.Read(ctx, o.name, 0, 0)
			if !o.accepts(want, b, err) {
				bad = append(bad, fmt.Sprintf("%s at snap %#x reads %q, %v; may be versions %v", o.name, id, b, err, sortedKeys(want)))
			}
		}
	}
	w.io.SetReadSnap(rados.SnapHead)
	return bad
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
