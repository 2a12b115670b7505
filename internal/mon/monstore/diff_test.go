package monstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// diffRun drives a Store and a raft.MemoryStorage with the same random
// sequence of Append, Compact, ApplySnapshot and HardState updates (plus
// Commits and reopens, which only the Store has) and compares everything
// raft can read from them after each step. The sequence depends only on
// the seed; on failure the test prints the operations so far.
type diffRun struct {
	t    *testing.T
	r    *rand.Rand
	fs   *vfs.MemFS
	opts Options
	s    *Store
	ms   *raft.MemoryStorage
	ops  []string // operation log, for replay by eye
	// applied mirrors the Store's applied index, which MemoryStorage lacks.
	applied uint64
}

// TestDifferentialMemoryStorage runs seeded random sequences; set
// CUTTLE_MONSTORE_SEED to replay one seed.
func TestDifferentialMemoryStorage(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	if v := os.Getenv("CUTTLE_MONSTORE_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = []uint64{seed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			// Cache budgets: default, tiny (mostly Pebble reads), none.
			cache := []int64{0, 300, -1}[seed%3]
			fs := vfs.NewMem()
			d := &diffRun{
				t: t, r: rand.New(rand.NewPCG(seed, 7)), fs: fs,
				opts: Options{FS: fs, Dir: "mon", EntryCacheBytes: cache},
				ms:   raft.NewMemoryStorage(),
			}
			var err error
			if d.s, err = Open(d.opts); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if d.s != nil {
					d.s.Close()
				}
			}()
			for range 300 {
				d.step()
				d.compare()
				if t.Failed() {
					t.Fatalf("seed %d, operations:\n%s", seed, strings.Join(d.ops, "\n"))
				}
			}
		})
	}
}

func (d *diffRun) logf(format string, args ...any) {
	d.ops = append(d.ops, fmt.Sprintf(format, args...))
}

// step performs one random operation on both storages.
func (d *diffRun) step() {
	t := d.t
	first, _ := d.ms.FirstIndex()
	last, _ := d.ms.LastIndex()
	switch k := d.r.IntN(20); {
	case k < 9: // append, possibly overwriting a suffix, with a HardState
		lo := max(first, d.applied+1)
		if d.applied == first-1 && d.r.IntN(5) == 0 && first > 1 {
			lo = first - 1 - uint64(d.r.IntN(int(min(first-1, 3)))) // partly compacted
		}
		if lo > last+1 {
			return
		}
		from := lo + uint64(d.r.IntN(int(last+2-lo)))
		prevTerm, _ := d.ms.Term(max(from, first) - 1)
		term := prevTerm + uint64(d.r.IntN(2))
		n := 1 + d.r.IntN(6)
		ents := make([]*pb.Entry, n)
		for i := range ents {
			ents[i] = d.randEntry(from+uint64(i), term)
			if d.r.IntN(4) == 0 {
				term++
			}
		}
		var hs *pb.HardState
		if d.r.IntN(2) == 0 {
			hs = mkHardState(term, uint64(d.r.IntN(4)), d.applied)
		}
		d.logf("append from %d n %d hs %v", from, n, hs)
		if hs != nil {
			d.ms.SetHardState(hs)
		}
		if err := d.ms.Append(ents); err != nil {
			t.Fatal(err)
		}
		if err := d.s.Append(hs, ents, nil); err != nil {
			t.Errorf("append: %v", err)
		}
	case k < 12: // commit
		if d.applied >= last {
			return
		}
		idx := d.applied + 1 + uint64(d.r.IntN(int(last-d.applied)))
		b := d.s.NewBatch()
		b.Put("svc", fmt.Appendf(nil, "k%d", d.r.IntN(5)), fmt.Appendf(nil, "v%d", idx))
		d.logf("commit %d", idx)
		if err := d.s.Commit(idx, b); err != nil {
			t.Errorf("commit: %v", err)
		}
		d.applied = idx
	case k < 15: // compact
		if d.applied < first {
			return
		}
		idx := first + uint64(d.r.IntN(int(d.applied-first+1)))
		d.logf("compact %d", idx)
		errMS := d.ms.Compact(idx)
		errS := d.s.Compact(idx)
		if !errors.Is(errS, errMS) {
			t.Errorf("compact %d: store %v, memory storage %v", idx, errS, errMS)
		}
	case k < 16: // snapshot beyond what is applied
		idx := d.applied + 1 + uint64(d.r.IntN(8))
		term, _ := d.ms.Term(last)
		term += uint64(d.r.IntN(2))
		snap := mkSnapshot(idx, term, []uint64{1, uint64(2 + d.r.IntN(3))},
			[]snapshotRecord{{service: "svc", key: []byte("snap"), value: fmt.Appendf(nil, "%d", idx)}})
		d.logf("apply snapshot %d/%d", idx, term)
		if err := d.ms.ApplySnapshot(snap); err != nil {
			t.Fatal(err)
		}
		if err := d.s.ApplySnapshot(snap); err != nil {
			t.Errorf("apply snapshot: %v", err)
		}
		d.applied = idx
	case k < 17: // an out-of-date snapshot fails alike
		if d.applied == 0 {
			return
		}
		snap := mkSnapshot(d.applied, 1, []uint64{1}, nil)
		d.logf("apply stale snapshot %d", d.applied)
		if err := d.s.ApplySnapshot(snap); !errors.Is(err, raft.ErrSnapOutOfDate) {
			t.Errorf("stale snapshot at %d: %v, want ErrSnapOutOfDate", d.applied, err)
		}
	case k < 18: // reopen
		d.logf("reopen")
		if err := d.s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err := Open(d.opts)
		if err != nil {
			d.s = nil
			t.Fatalf("reopen: %v\n%s", err, strings.Join(d.ops, "\n"))
		}
		d.s = s
	default: // HardState alone
		hs := mkHardState(uint64(1+d.r.IntN(9)), uint64(d.r.IntN(4)), d.applied)
		d.logf("hard state %v", hs)
		d.ms.SetHardState(hs)
		if err := d.s.Append(hs, nil, nil); err != nil {
			t.Errorf("hard state: %v", err)
		}
	}
}

func (d *diffRun) randEntry(index, term uint64) *pb.Entry {
	e := &pb.Entry{Index: new(index), Term: new(term)}
	if d.r.IntN(2) == 0 {
		e.Type = pb.EntryType(d.r.IntN(3)).Enum()
	}
	switch d.r.IntN(4) {
	case 0: // nil data
	case 1:
		e.Data = []byte{}
	default:
		e.Data = make([]byte, d.r.IntN(120))
		for i := range e.Data {
			e.Data[i] = byte(d.r.Uint32())
		}
	}
	return e
}

// compare checks that both storages answer every raft.Storage call alike.
func (d *diffRun) compare() {
	t := d.t
	first, _ := d.ms.FirstIndex()
	last, _ := d.ms.LastIndex()
	if f, err := d.s.FirstIndex(); f != first || err != nil {
		t.Errorf("FirstIndex %d %v, want %d", f, err, first)
	}
	if l, err := d.s.LastIndex(); l != last || err != nil {
		t.Errorf("LastIndex %d %v, want %d", l, err, last)
	}
	hsM, csM, _ := d.ms.InitialState()
	hsS, csS, err := d.s.InitialState()
	if err != nil {
		t.Errorf("InitialState: %v", err)
	}
	if hsS.GetTerm() != hsM.GetTerm() || hsS.GetVote() != hsM.GetVote() || hsS.GetCommit() != hsM.GetCommit() {
		t.Errorf("HardState %v, want %v", hsS, hsM)
	}
	if err := csS.Equivalent(csM); err != nil {
		t.Errorf("ConfState: %v", err)
	}
	for i := first - min(first, 2); i <= last+2; i++ {
		tm, errM := d.ms.Term(i)
		ts, errS := d.s.Term(i)
		if tm != ts || errM != errS {
			t.Errorf("Term(%d) = %d, %v; want %d, %v", i, ts, errS, tm, errM)
		}
	}
	for range 6 {
		lo := first - 1 + uint64(d.r.IntN(int(last-first+3)))
		hi := lo + uint64(d.r.IntN(int(last+2-min(lo, last+1))))
		hi = min(hi, last+1)
		if lo > hi {
			continue
		}
		maxSize := []uint64{0, 1, 100, 300, ^uint64(0)}[d.r.IntN(5)]
		em, errM := d.ms.Entries(lo, hi, maxSize)
		es, errS := d.s.Entries(lo, hi, maxSize)
		if errM != errS || len(em) != len(es) {
			t.Errorf("Entries(%d, %d, %d): %d entries, %v; want %d, %v", lo, hi, maxSize, len(es), errS, len(em), errM)
			continue
		}
		for i := range em {
			if !proto.Equal(em[i], es[i]) {
				t.Errorf("Entries(%d, %d, %d)[%d] = %v, want %v", lo, hi, maxSize, i, es[i], em[i])
			}
		}
	}
	// Snapshot is built at the applied index; it matches MemoryStorage's
	// while nothing was applied since the last installed snapshot.
	snapM, _ := d.ms.Snapshot()
	if d.applied > 0 && d.applied == snapM.GetMetadata().GetIndex() {
		snapS, err := d.s.Snapshot()
		if err != nil {
			t.Errorf("Snapshot: %v", err)
		} else if mS, mM := snapS.GetMetadata(), snapM.GetMetadata(); mS.GetIndex() != mM.GetIndex() || mS.GetTerm() != mM.GetTerm() || mS.GetConfState().Equivalent(mM.GetConfState()) != nil {
			t.Errorf("Snapshot metadata %v, want %v", mS, mM)
		}
	}
}
