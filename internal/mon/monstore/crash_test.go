package monstore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	pb "go.etcd.io/raft/v3/raftpb"
)

// opStream generates a seeded stream of store writes shaped like a raft
// follower's: appends (sometimes overwriting an unapplied suffix) with
// HardStates, commits of service changes and history, compactions and,
// rarely, a snapshot installation.
type opStream struct {
	r       *rand.Rand
	term    uint64
	applied uint64
	epoch   uint64
}

// next performs one write on s and reports whether it is synced (Compact
// is not) and its error.
func (g *opStream) next(s *Store) (synced bool, err error) {
	first, err := s.FirstIndex()
	if err != nil {
		return true, err
	}
	last, _ := s.LastIndex()
	switch k := g.r.IntN(10); {
	case k < 5 || last == g.applied:
		from := last + 1
		if last > g.applied && g.r.IntN(4) == 0 {
			from = g.applied + 1 + uint64(g.r.IntN(int(last-g.applied))) // overwrite
			g.term++
		}
		ents := make([]*pb.Entry, 1+g.r.IntN(4))
		for i := range ents {
			ents[i] = mkEntry(from+uint64(i), g.term, fmt.Appendf(nil, "e%d-%d", from+uint64(i), g.r.IntN(1000)))
		}
		return true, s.Append(mkHardState(g.term, 1, g.applied), ents, nil)
	case k < 8:
		idx := g.applied + 1 + uint64(g.r.IntN(int(last-g.applied)))
		b := s.NewBatch()
		b.Put("kv", fmt.Appendf(nil, "k%d", g.r.IntN(8)), fmt.Appendf(nil, "v%d", idx))
		if g.r.IntN(3) == 0 {
			b.Delete("kv", fmt.Appendf(nil, "k%d", g.r.IntN(8)))
		}
		g.epoch++
		b.PutEpoch("osdmap", g.epoch, fmt.Appendf(nil, "inc%d", g.epoch), fmt.Appendf(nil, "full%d", g.epoch))
		b.Trim("osdmap", g.epoch-min(g.epoch-1, 3))
		if err := s.Commit(idx, b); err != nil {
			g.epoch--
			return true, err
		}
		g.applied = idx
		return true, nil
	case k < 9:
		if g.applied < first {
			return true, nil
		}
		return false, s.Compact(first + uint64(g.r.IntN(int(g.applied-first+1))))
	default:
		idx := g.applied + 1 + uint64(g.r.IntN(5))
		g.term++
		snap := mkSnapshot(idx, g.term, []uint64{1, 2, 3}, []snapshotRecord{
			{service: "kv", key: []byte("k0"), value: fmt.Appendf(nil, "snap%d", idx)},
			{service: "osdmap", key: []byte(keyFirstCommitted), value: encodeEpoch(g.epoch + 1)},
			{service: "osdmap", key: []byte(keyLastCommitted), value: encodeEpoch(g.epoch + 1)},
		})
		if err := s.Append(mkHardState(g.term, 1, idx), nil, snap); err != nil {
			return true, err
		}
		g.applied = idx
		g.epoch++
		return true, nil
	}
}

// TestCrashConsistency writes a stream on a crashable MemFS and takes crash
// clones (keeping a random part of the unsynced data) between operations.
// Each clone must reopen to the state after some operation k between the
// last synced operation and the last one performed: every synced Append
// and Commit survives, and nothing is half there.
func TestCrashConsistency(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 42))
			fs := vfs.NewCrashableMem()
			s := testOpen(t, fs, "mon")
			defer s.Close()
			g := &opStream{r: r, term: 1}
			dumps := []string{dump(t, s)}
			lastSynced := 0
			crashes := 0
			for n := 1; n <= 150; n++ {
				synced, err := g.next(s)
				if err != nil {
					t.Fatalf("op %d: %v", n, err)
				}
				if synced {
					lastSynced = n
				}
				dumps = append(dumps, dump(t, s))
				if r.IntN(8) != 0 {
					continue
				}
				crashes++
				rng := rand.New(rand.NewPCG(seed, uint64(n)))
				clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rng})
				c, err := Open(Options{FS: clone, Dir: "mon"})
				if err != nil {
					t.Fatalf("op %d: reopen crash clone: %v", n, err)
				}
				got := dump(t, c)
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				k := n
				for k >= lastSynced && dumps[k] != got {
					k--
				}
				if k < lastSynced {
					t.Fatalf("op %d (last synced %d): crash clone matches no state since: %s", n, lastSynced, diffLines(got, dumps[n]))
				}
			}
			if crashes == 0 {
				t.Fatal("no crash point")
			}
		})
	}
}
