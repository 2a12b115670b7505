package blockstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// crashObjects is the universe of objects the crash test touches.
const crashObjects = 4

type crashState map[int][]byte // object index -> data (absent: no object)

func (st crashState) clone() crashState {
	c := make(crashState, len(st))
	for k, v := range st {
		c[k] = bytes.Clone(v)
	}
	return c
}

func crashObj(i int) objid.ID { return objid.Object(1, "", fmt.Sprint("c", i)) }

// crashTxn builds transaction number n on two objects: whole-unit
// writes (copy-on-write past overwriteInPlaceMax, deferred in place up
// to it), small (deferred) overwrites, truncates and
// removes, and an attribute "v" = n on every object it leaves, so that
// the recovered prefix can be found. It returns the state after it.
func crashTxn(r *rand.Rand, cur crashState, n int) (*objectstore.Transaction, crashState) {
	next := cur.clone()
	tx := new(objectstore.Transaction)
	a := r.IntN(crashObjects)
	b := (a + 1 + r.IntN(crashObjects-1)) % crashObjects
	for _, i := range []int{a, b} {
		o := crashObj(i)
		d, exists := next[i]
		switch k := r.IntN(10); {
		case k < 4 || !exists:
			off := uint64(r.IntN(3)) * testAU
			data := randBytes(r, testAU*(1+r.IntN(3)))
			tx.Write(pg, o, off, data)
			if end := off + uint64(len(data)); end > uint64(len(d)) {
				d = append(d, make([]byte, end-uint64(len(d)))...)
			}
			copy(d[off:], data)
		case k < 8 && len(d) > 0:
			off := r.IntN(len(d))
			data := randBytes(r, 1+r.IntN(100))
			tx.Write(pg, o, uint64(off), data)
			if end := off + len(data); end > len(d) {
				d = append(d, make([]byte, end-len(d))...)
			}
			copy(d[off:], data)
		case k < 9:
			size := r.IntN(len(d) + 1)
			tx.Truncate(pg, o, uint64(size))
			d = d[:size]
		default:
			tx.Remove(pg, o)
			delete(next, i)
			continue
		}
		tx.SetAttr(pg, o, "v", []byte(strconv.Itoa(n)))
		next[i] = d
	}
	return tx, next
}

// TestCrashConsistency commits a stream of transactions on a crashable
// MemFS, takes crash clones at random points, and checks that each
// clone reopens to the state after some prefix of the stream that
// includes every transaction whose Committed had fired.
func TestCrashConsistency(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			fs := vfs.NewCrashableMem()
			opts := testOptions(fs)
			opts.Size = 8 << 20
			s := mkfsOpen(t, opts)
			apply(t, s, new(objectstore.Transaction).CreateCollection(pg))
			models := []crashState{{}}
			var comps []*objectstore.Completion
			type crash struct {
				fs        *vfs.MemFS
				committed int // transactions known durable
				queued    int
			}
			var crashes []crash
			// Odd seeds flush Pebble's memtables now and then, so that
			// Pebble gives up WALs holding deferred data not yet applied
			// (walkeep.go).
			flushes := rand.New(rand.NewPCG(seed, 7))
			for n := 1; n <= 80; n++ {
				if seed%2 == 1 && flushes.IntN(8) == 0 {
					if err := s.db.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				tx, next := crashTxn(r, models[len(models)-1], n)
				c, err := s.Queue(ctx, tx)
				if err != nil {
					t.Fatalf("txn %d: %v", n, err)
				}
				comps = append(comps, c)
				models = append(models, next)
				if r.IntN(3) == 0 {
					if err := c.Wait(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if r.IntN(6) == 0 {
					committed := 0
					for j, c := range comps {
						if isClosed(c.Committed()) {
							committed = j + 1
						}
					}
					rng := rand.New(rand.NewPCG(seed, uint64(n)))
					clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(100), RNG: rng})
					crashes = append(crashes, crash{clone, committed, n})
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for _, cr := range crashes {
				o := opts
				o.FS = cr.fs
				s, err := Open(o)
				if err != nil {
					t.Fatalf("open crash clone at txn %d: %v", cr.queued, err)
				}
				k := 0
				for i := range crashObjects {
					v, err := s.GetAttr(ctx, pg, crashObj(i), "v")
					if err == nil {
						n, _ := strconv.Atoi(string(v))
						k = max(k, n)
					}
				}
				// The prefix is at least the newest surviving version and
				// every transaction known committed.
				ok := false
				for cand := max(k, cr.committed); cand <= cr.queued && !ok; cand++ {
					ok = matches(ctx, s, models[cand])
				}
				if !ok {
					t.Errorf("crash at txn %d (committed %d): recovered state (newest version %d) is no prefix at or after the committed ones", cr.queued, cr.committed, k)
				}
				// New objects after the crash get node ids no record
				// holds (the counter is persisted ahead of the ids).
				nids := map[uint64]bool{}
				for i := range crashObjects {
					if rec, err := s.record(pg, crashObj(i)); err == nil && rec != nil {
						nids[rec.Nid] = true
					}
				}
				for i := range 3 {
					o := objid.Object(1, "", fmt.Sprint("after", i))
					apply(t, s, new(objectstore.Transaction).Touch(pg, o))
					rec, err := s.record(pg, o)
					if err != nil || rec == nil || nids[rec.Nid] {
						t.Fatalf("crash at txn %d: new object's record %+v (%v) reuses a node id", cr.queued, rec, err)
					}
					nids[rec.Nid] = true
				}
				checkQuiescent(t, s)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if rep, err := Fsck(ctx, o, FsckOptions{}); err != nil || !rep.Clean() {
					t.Errorf("fsck of crash clone at txn %d: %v, %v", cr.queued, err, rep.Problems)
				}
			}
		})
	}
}

func matches(ctx context.Context, s *Store, st crashState) bool {
	for i := range crashObjects {
		got, err := s.Read(ctx, pg, crashObj(i), 0, 0)
		want, exists := st[i]
		if !exists {
			if !errors.Is(err, objectstore.ErrNotFound) {
				return false
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			return false
		}
	}
	return true
}
