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

// The snapshot workload of the chaos test and of the thrash test
// (internal/cli) (docs/SNAPSHOTS.md): a client of a pool of self-managed
// snapshots takes snapshots, writes, rolls back and removes snapshots
// while the faults run, and checks every read at a live snapshot; at the
// end every read at every live snapshot must give what the object held
// when the snapshot was taken.
//
// Writes that fail may or may not have been applied, so the model keeps,
// for the head and for each live snapshot, the set of versions the
// object may have (0: no object). A removal that fails may or may not
// have been applied too: the snapshot leaves the model at once (reads
// at it prove nothing any more) and its removal is retried.

// SnapObjects is how many objects the snapshot workload writes.
const SnapObjects = 6

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

// SnapWorkload is the client: its IOContext, objects, live snapshots
// (oldest first) and the snapshots whose removal is yet to be
// confirmed. One goroutine runs it; read Ops and call Verify and
// RemoveAll only after Run returned.
type SnapWorkload struct {
	io       *rados.IOContext
	objs     []*snapObject
	live     []uint64
	removing []uint64
	seq      uint64
	// Ops counts the operations that completed, by kind.
	Ops map[string]int
}

// NewSnapWorkload makes the workload of SnapObjects objects in io's
// pool, which must use self-managed snapshots (or none yet).
func NewSnapWorkload(io *rados.IOContext) *SnapWorkload {
	w := &SnapWorkload{io: io, Ops: map[string]int{}}
	for i := range SnapObjects {
		w.objs = append(w.objs, &snapObject{name: fmt.Sprint("snapped-", i), head: map[int]bool{0: true}, at: map[uint64]map[int]bool{}, next: 1})
	}
	return w
}

// Objects names the workload's objects.
func (w *SnapWorkload) Objects() []string {
	var out []string
	for _, o := range w.objs {
		out = append(out, o.name)
	}
	return out
}

// Live returns the live snapshots, oldest first.
func (w *SnapWorkload) Live() []uint64 { return slices.Clone(w.live) }

// setContext gives the IOContext the live snapshots.
func (w *SnapWorkload) setContext() error {
	snaps := slices.Clone(w.live)
	slices.Reverse(snaps)
	return w.io.SetSnapWriteContext(w.seq, snaps)
}

// Run runs the workload until stop, each op given up to opTimeout and
// pausing up to pause between steps (virtual time in the simulation,
// real time on a launched cluster), reporting what it saw wrong.
func (w *SnapWorkload) Run(rng *rand.Rand, pause, opTimeout time.Duration, stop <-chan struct{}, report func(string, ...any)) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		w.step(ctx, rng, report)
		cancel()
		time.Sleep(time.Duration(rng.IntN(int(pause/time.Millisecond))) * time.Millisecond)
	}
}

// forget takes snapshot id out of the model and the snap context.
func (w *SnapWorkload) forget(id uint64, report func(string, ...any)) {
	w.live = slices.DeleteFunc(w.live, func(x uint64) bool { return x == id })
	for _, x := range w.objs {
		delete(x.at, id)
	}
	if err := w.setContext(); err != nil {
		report("snap context %d %v: %v", w.seq, w.live, err)
	}
}

// retryRemovals removes again the snapshots whose removal failed (a
// second removal of an id answers success).
func (w *SnapWorkload) retryRemovals(ctx context.Context) error {
	for len(w.removing) > 0 {
		if err := w.io.SelfManagedSnapRemove(ctx, w.removing[0]); err != nil {
			return err
		}
		w.removing = w.removing[1:]
	}
	return nil
}

func (w *SnapWorkload) step(ctx context.Context, rng *rand.Rand, report func(string, ...any)) {
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
		w.Ops["snap"]++
	case op < 3 && len(w.live) > 0: // remove one
		id := w.live[rng.IntN(len(w.live))]
		w.forget(id, report)
		w.removing = append(w.removing, id)
		if w.retryRemovals(ctx) == nil {
			w.Ops["rmsnap"]++
		}
	case op < 5 && len(w.live) > 0: // roll back
		id := w.live[rng.IntN(len(w.live))]
		if err := w.io.Rollback(ctx, o.name, id); err != nil {
			for v := range o.at[id] {
				o.head[v] = true // may or may not have happened
			}
			return
		}
		o.head = maps.Clone(o.at[id])
		w.Ops["rollback"]++
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
		w.Ops["snap read"]++
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
		w.Ops["delete"]++
	default: // write
		v := o.next
		o.next++
		if err := w.io.WriteFull(ctx, o.name, o.content(v)); err != nil {
			o.head[v] = true
			return
		}
		o.head = map[int]bool{v: true}
		w.Ops["write"]++
	}
}

// Verify reads every object at its head and every live snapshot, and
// describes each read that is not what the model allows.
func (w *SnapWorkload) Verify(ctx context.Context) []string {
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

// RemoveAll removes every snapshot the workload made that is still
// live or whose removal failed, so that trimming leaves only heads.
func (w *SnapWorkload) RemoveAll(ctx context.Context) error {
	for _, id := range w.Live() {
		w.forget(id, func(string, ...any) {})
		w.removing = append(w.removing, id)
	}
	if err := w.retryRemovals(ctx); err != nil {
		return fmt.Errorf("removing snapshots %v: %w", w.removing, err)
	}
	return nil
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
