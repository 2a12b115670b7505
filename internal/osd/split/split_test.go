package split

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cuttlestore/cuttle/crush"
	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

// An object is in PG s exactly when its hash's low SplitBits(s) bits are s:
// the property SplitCollection relies on.
func TestBitsSelectThePG(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []uint32{1, 2, 3, 5, 8, 12, 13, 16, 17, 64, 100, 1000} {
		for range 2000 {
			h := rng.Uint32()
			s := Where(h, n)
			if s >= n {
				t.Fatalf("Where(%#x, %d) = %d", h, n, s)
			}
			for _, other := range []uint32{s, (s + 1) % n, rng.Uint32N(n)} {
				b := osdmap.SplitBits(other, n)
				in := h&(uint32(1)<<b-1) == other
				if in != (other == s) {
					t.Fatalf("pg_num %d, hash %#x (in pg %d): pg %d with %d bits says %v", n, h, s, other, b, in)
				}
			}
		}
	}
}

func TestChildren(t *testing.T) {
	for _, c := range []struct {
		parent, old, new uint32
		want             []uint32
	}{
		{3, 8, 64, []uint32{11, 19, 27, 35, 43, 51, 59}},
		{3, 8, 16, []uint32{11}},
		{0, 1, 4, []uint32{1, 2, 3}},
		{4, 12, 13, []uint32{12}},
		{5, 12, 13, nil},
		{5, 8, 8, nil},
		{5, 16, 8, nil},
		{2, 3, 8, []uint32{6}}, // pg_num 3 → 8: 2 held hashes ending 10, of which 110 go to 6
		{1, 3, 8, []uint32{3, 5, 7}},
	} {
		if got := Children(c.parent, c.old, c.new); !slices.Equal(got, c.want) {
			t.Errorf("Children(%d, %d, %d) = %v, want %v", c.parent, c.old, c.new, got, c.want)
		}
	}
}

// Growing pg_num only moves an object from its PG to one of that PG's
// children (Ceph's stable mod), and applying Plan's moves in order to a
// parent's hashes leaves each in the PG it maps to.
func TestPlanMovesEveryObjectHome(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, grow := range [][2]uint32{{8, 64}, {8, 16}, {12, 13}, {3, 8}, {1, 100}, {32, 64}, {100, 1000}} {
		old, n := grow[0], grow[1]
		for range 3000 {
			h := rng.Uint32()
			parent := Where(h, old)
			moves, err := Plan(parent, old, n)
			if err != nil {
				t.Fatal(err)
			}
			at := parent
			for _, m := range moves {
				if at == parent && h&(uint32(1)<<m.Bits-1) == m.Child {
					at = m.Child
				}
			}
			if want := Where(h, n); at != want {
				t.Fatalf("%d -> %d: hash %#x from pg %d ends in %d, want %d (moves %v)", old, n, h, parent, at, want, moves)
			}
			if at != parent && !slices.Contains(Children(parent, old, n), at) {
				t.Fatalf("%d -> %d: hash %#x went from %d to %d, not a child", old, n, h, parent, at)
			}
		}
	}
}

func TestPlanErrors(t *testing.T) {
	for _, c := range [][3]uint32{{8, 8, 16}, {0, 0, 4}, {3, 8, 8}, {3, 8, 4}} {
		if _, err := Plan(c[0], c[1], c[2]); err == nil {
			t.Errorf("Plan(%d, %d, %d): no error", c[0], c[1], c[2])
		}
	}
}

func entry(counter uint64, name string) pglog.Entry {
	return pglog.Entry{Version: wire.Version{Epoch: 5, Counter: counter}, Kind: pglog.Modify, Object: objid.Object(1, "", name),
		Req: wire.ReqID{Client: "client.1", Incarnation: 1, Tid: counter}}
}

// Each entry, and so each request's answer, goes to the PG that holds its
// object after the split, in order; each PG's info ends at its own newest
// entry and starts a new interval.
func TestLogAndInfo(t *testing.T) {
	var entries []pglog.Entry
	for i := range 200 {
		entries = append(entries, entry(uint64(i+10), "obj"+string(rune('A'+i%50))+string(rune('a'+i%7))))
	}
	parentSeed := Where(entries[0].Object.Hash, 8)
	var mine []pglog.Entry
	for _, e := range entries {
		if Where(e.Object.Hash, 8) == parentSeed {
			mine = append(mine, e)
		}
	}
	byPG := Log(mine, 64)
	total := 0
	for seed, es := range byPG {
		total += len(es)
		if seed != parentSeed && !slices.Contains(Children(parentSeed, 8, 64), seed) {
			t.Fatalf("entries went to pg %d, not in pg %d's family", seed, parentSeed)
		}
		for i, e := range es {
			if Where(e.Object.Hash, 64) != seed {
				t.Fatalf("entry for %v in pg %d", e.Object, seed)
			}
			if i > 0 && !es[i-1].Version.Less(e.Version) {
				t.Fatalf("pg %d: entries out of order", seed)
			}
		}
	}
	if total != len(mine) || len(byPG) < 2 {
		t.Fatalf("%d entries divided into %d PGs, %d in all; want %d", len(mine), len(byPG), total, len(mine))
	}
	parent := pglog.Info{PG: osdmap.PG{Pool: 1, Seed: parentSeed}, EpochCreated: 2, LastUpdate: mine[len(mine)-1].Version,
		LastComplete: mine[len(mine)-1].Version, LogTail: wire.Version{Epoch: 5, Counter: 1}, SameIntervalSince: 4,
		LastEpochStarted: 4, LastScrub: 77, Stats: pglog.Stats{Objects: 50, Bytes: 5000}}
	for seed, es := range byPG {
		info, err := Info(parent, seed, es, pglog.Stats{Objects: 3, Bytes: 30}, 9)
		if err != nil {
			t.Fatal(err)
		}
		want := parent
		want.PG.Seed, want.LastUpdate, want.LastComplete = seed, es[len(es)-1].Version, es[len(es)-1].Version
		want.SameIntervalSince, want.Stats = 9, pglog.Stats{Objects: 3, Bytes: 30}
		if seed != parentSeed {
			want.EpochCreated = 9
		}
		if !info.Equal(want) {
			t.Errorf("pg %d info %+v, want %+v", seed, info, want)
		}
	}
	// A PG left without entries ends at the tail.
	if info, err := Info(parent, 99, nil, pglog.Stats{}, 9); err != nil || info.LastUpdate != parent.LogTail {
		t.Errorf("empty share: %+v %v", info, err)
	}
	if _, err := Info(parent, 99, []pglog.Entry{entry(20, "a"), entry(19, "b")}, pglog.Stats{}, 9); err == nil {
		t.Error("entries out of order: no error")
	}
	if _, err := Info(parent, 99, []pglog.Entry{entry(1, "a")}, pglog.Stats{}, 9); err == nil {
		t.Error("an entry at the tail: no error")
	}
}

func TestMissingAndStats(t *testing.T) {
	var ids []objid.ID
	var objs []Object
	for i := range 64 {
		id := objid.Object(1, "", "m"+string(rune('a'+i%26))+string(rune('A'+i/26)))
		ids = append(ids, id)
		objs = append(objs, Object{ID: id, Size: uint64(i)})
	}
	missing, stats := Missing(ids, 16), Stats(objs, 16)
	var n int
	var objects, bytes int64
	for seed, list := range missing {
		n += len(list)
		for _, id := range list {
			if Where(id.Hash, 16) != seed {
				t.Fatalf("%v in pg %d", id, seed)
			}
		}
		if stats[seed].Objects != int64(len(list)) {
			t.Fatalf("pg %d: %d objects counted, %d listed", seed, stats[seed].Objects, len(list))
		}
	}
	for _, s := range stats {
		objects += s.Objects
		bytes += s.Bytes
	}
	if n != 64 || objects != 64 || bytes != 63*64/2 {
		t.Fatalf("divided %d ids, %d objects, %d bytes", n, objects, bytes)
	}
}

func TestPools(t *testing.T) {
	spec, err := crush.BuildLayout(crush.Layout{Hosts: 1, OSDsPerHost: 1})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := crush.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	pool := func(id int64, pgNum uint32) osdmap.Pool {
		return osdmap.Pool{ID: id, Name: "p" + string(rune('0'+id)), Type: osdmap.PoolReplicated, Size: 1, MinSize: 1, PGNum: pgNum, PGPNum: min(pgNum, 8)}
	}
	old, err := osdmap.NewSimple(cm, 1, pool(1, 8), pool(2, 8), pool(3, 16))
	if err != nil {
		t.Fatal(err)
	}
	m, err := osdmap.NewSimple(cm, 1, pool(1, 64), pool(2, 8), pool(3, 8), pool(4, 32))
	if err != nil {
		t.Fatal(err)
	}
	got := Pools(old, m)
	if len(got) != 1 || got[1] != 8 {
		t.Fatalf("Pools = %v, want pool 1 from 8", got)
	}
	if Pools(nil, m) != nil {
		t.Fatal("a first map splits something")
	}
	if s := Sorted(map[uint32]bool{9: true, 1: true, 4: true}); !slices.Equal(s, []uint32{1, 4, 9}) {
		t.Fatalf("Sorted = %v", s)
	}
}
