package merge

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/osd/pglog"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

func TestTargetAndSourcesInvertSplit(t *testing.T) {
	// 64 -> 16: PG 3 takes 19, 35 and 51, as it split into them.
	if got := Sources(3, 64, 16); !slices.Equal(got, []uint32{19, 35, 51}) {
		t.Fatalf("Sources(3, 64, 16) = %v", got)
	}
	for s := uint32(16); s < 64; s++ {
		if got := Target(s, 16); got != s%16 {
			t.Errorf("Target(%d, 16) = %d", s, got)
		}
	}
	// Not a power of two: 12 -> 10 merges 10 into 2 and 11 into 3
	// (Ceph's stable modulo with mask 15).
	if Target(10, 10) != 2 || Target(11, 10) != 3 || !slices.Equal(Sources(3, 12, 10), []uint32{11}) {
		t.Fatalf("12 -> 10: Target(10)=%d Target(11)=%d Sources(3)=%v", Target(10, 10), Target(11, 10), Sources(3, 12, 10))
	}
}

// entry is a log entry of object name at version e'c with request tid.
func entry(name string, e, c, tid uint64) pglog.Entry {
	return pglog.Entry{Version: wire.Version{Epoch: e, Counter: c}, Kind: pglog.Modify, Object: objid.Object(1, "", name),
		Req: wire.ReqID{Client: "client.1", Incarnation: 1, Tid: tid}}
}

func ver(e, c uint64) wire.Version { return wire.Version{Epoch: e, Counter: c} }

// copyOf is a complete copy of pg 1.seed laid out for layout, whose log
// holds entries.
func copyOf(seed, layout uint32, les uint64, objects int64, entries ...pglog.Entry) *Copy {
	info := pglog.Info{PG: osdmap.PG{Pool: 1, Seed: seed}, EpochCreated: 1, LastEpochStarted: les,
		LogTail: ver(2, 0), Stats: pglog.Stats{Objects: objects, Bytes: objects * 10}, LastScrub: 100 + int64(seed)}
	info.LastUpdate = info.LogTail
	if n := len(entries); n > 0 {
		info.LastUpdate = entries[n-1].Version
	}
	info.LastComplete = info.LastUpdate
	return &Copy{Layout: layout, Info: info, Entries: entries}
}

// pool16 is pool 1 after merging 20 PGs into 16: sources 16..19 merge
// into 0..3, with the versions recorded for them.
func pool16(recorded map[uint32][2]wire.Version) *osdmap.Pool {
	p := &osdmap.Pool{ID: 1, Name: "p", Type: osdmap.PoolReplicated, Size: 3, MinSize: 2, PGNum: 16, PGPNum: 16}
	p.LastMerge.From = 20
	for s := uint32(16); s < 20; s++ {
		v := recorded[s]
		p.LastMerge.PGs = append(p.LastMerge.PGs, osdmap.MergedPG{Source: s,
			SourceVersion: osdmap.PGVersion{Epoch: v[0].Epoch, Counter: v[0].Counter},
			TargetVersion: osdmap.PGVersion{Epoch: v[1].Epoch, Counter: v[1].Counter}})
	}
	return p
}

func TestMerge(t *testing.T) {
	const epoch = 30
	tgt := func() *Copy { return copyOf(3, 20, 20, 4, entry("a", 5, 1, 1), entry("b", 9, 2, 2)) }
	src := func() *Copy { return copyOf(19, 20, 22, 2, entry("c", 5, 1, 3), entry("d", 12, 2, 4)) }
	recorded := map[uint32][2]wire.Version{19: {ver(12, 2), ver(9, 2)}, 17: {ver(2, 0), {}}, 18: {}, 16: {}}
	pool := pool16(recorded)
	type want struct {
		current bool
		why     string
	}
	for _, tc := range []struct {
		name    string
		pool    *osdmap.Pool
		tgt     *Copy
		sources map[uint32]*Copy
		want    want
	}{
		{name: "both recorded", pool: pool, tgt: tgt(), sources: map[uint32]*Copy{19: src()}, want: want{current: true}},
		{name: "source behind", pool: pool, tgt: tgt(),
			sources: map[uint32]*Copy{19: copyOf(19, 20, 20, 1, entry("c", 5, 1, 3))}, want: want{why: "source 1.13 is at 5'1"}},
		{name: "target behind", pool: pool, tgt: copyOf(3, 20, 20, 3, entry("a", 5, 1, 1)),
			sources: map[uint32]*Copy{19: src()}, want: want{why: "target 1.3 is at 5'1"}},
		{name: "source absent here", pool: pool, tgt: tgt(), want: want{why: "source 1.13 is at 0'0"}},
		{name: "target absent here", pool: pool, sources: map[uint32]*Copy{19: src()}, want: want{why: "target 1.3 is at 0'0"}},
		{name: "source missing objects", pool: pool, tgt: tgt(),
			sources: map[uint32]*Copy{19: func() *Copy { c := src(); c.Missing = 1; return c }()}, want: want{why: "complete false"}},
		{name: "laid out for an earlier step", pool: pool,
			tgt:     func() *Copy { c := tgt(); c.Layout = 40; return c }(),
			sources: map[uint32]*Copy{19: src()}, want: want{why: "laid out for pg_num 40, the last merge was from 20"}},
		{name: "no merge recorded", pool: func() *osdmap.Pool { p := *pool; p.LastMerge = osdmap.PoolMerge{}; return &p }(),
			tgt: tgt(), sources: map[uint32]*Copy{19: src()}, want: want{why: "the last merge was from 0"}},
		// A source never written (recorded 0'0) and held nowhere merges
		// as empty: PG 2's source 18.
		{name: "empty source absent", pool: pool, tgt: func() *Copy {
			c := copyOf(2, 20, 20, 0)
			c.Info.LastUpdate, c.Info.LastComplete, c.Info.LogTail = ver(0, 0), ver(0, 0), ver(0, 0)
			return c
		}(), want: want{current: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := uint32(3)
			if tc.tgt != nil {
				target = tc.tgt.Info.PG.Seed
			}
			got, err := Merge(tc.pool, target, tc.tgt, tc.sources, epoch)
			if err != nil {
				t.Fatal(err)
			}
			if got.Current != tc.want.current || !strings.Contains(got.Why, tc.want.why) {
				t.Fatalf("current %v why %q, want %v %q", got.Current, got.Why, tc.want.current, tc.want.why)
			}
			if got.Info.PG != (osdmap.PG{Pool: 1, Seed: target}) || got.Info.SameIntervalSince != epoch {
				t.Fatalf("info %+v: not the target's in a new interval", got.Info)
			}
			var objects int64
			for _, c := range append([]*Copy{tc.tgt}, tc.sources[19]) {
				if c != nil {
					objects += c.Info.Stats.Objects
				}
			}
			if got.Info.Stats.Objects != objects {
				t.Fatalf("objects %d, want %d", got.Info.Stats.Objects, objects)
			}
			if !got.Current {
				// Stale: behind any current copy's log tail and
				// activation, so peering backfills it.
				if got.Info.LastUpdate != (wire.Version{}) || got.Info.LastEpochStarted != 0 || len(got.Entries) != 0 ||
					!got.Info.LastUpdate.Less(wire.Version{Epoch: epoch}) {
					t.Fatalf("stale merge: info %+v, %d entries", got.Info, len(got.Entries))
				}
				return
			}
			// Current: every entry, renumbered after the merge epoch's
			// tail, the target's first; requests still found.
			if got.Info.LogTail != ver(epoch, 0) || got.Info.LastUpdate != got.Info.LastComplete {
				t.Fatalf("current merge: info %+v", got.Info)
			}
			var all []pglog.Entry
			for _, c := range append([]*Copy{tc.tgt}, tc.sources[19]) {
				if c != nil {
					all = append(all, c.Entries...)
				}
			}
			if len(got.Entries) != len(all) {
				t.Fatalf("%d entries, want %d", len(got.Entries), len(all))
			}
			l := pglog.NewLog(got.Info.LogTail)
			for i, e := range got.Entries {
				if e.Version != ver(epoch, uint64(i+1)) || e.Req != all[i].Req || e.Object != all[i].Object {
					t.Fatalf("entry %d: %+v, want %+v renumbered %v", i, e, all[i], ver(epoch, uint64(i+1)))
				}
				if err := l.Append(e); err != nil {
					t.Fatal(err)
				}
			}
			if l.Head() != got.Info.LastUpdate {
				t.Fatalf("log head %v, last update %v", l.Head(), got.Info.LastUpdate)
			}
			for _, e := range all {
				if _, ok := l.Lookup(e.Req); !ok {
					t.Fatalf("request %v lost in the merge", e.Req)
				}
			}
			if tc.sources[19] != nil && got.Info.LastEpochStarted != 22 {
				t.Fatalf("last epoch started %d, want the newest, 22", got.Info.LastEpochStarted)
			}
		})
	}
}

// The same copies merge into the same PG on every OSD, whatever order
// the OSD found them in: peering compares their logs entry by entry.
func TestMergeIsDeterministic(t *testing.T) {
	recorded := map[uint32][2]wire.Version{}
	for s := uint32(16); s < 20; s++ {
		recorded[s] = [2]wire.Version{{}, ver(3, 1)}
	}
	pool := pool16(recorded)
	pool.LastMerge.From = 20
	var first Result
	for i := range 20 {
		tgt := copyOf(0, 20, 5, 1, entry("t", 3, 1, 9))
		srcs := map[uint32]*Copy{16: copyOf(16, 20, 5, 0)}
		srcs[16].Info.LastUpdate, srcs[16].Info.LastComplete, srcs[16].Info.LogTail = ver(0, 0), ver(0, 0), ver(0, 0)
		got, err := Merge(pool, 0, tgt, srcs, 40)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Current {
			t.Fatalf("not current: %s", got.Why)
		}
		if i == 0 {
			first = got
		} else if !reflect.DeepEqual(got.Info, first.Info) || !slices.EqualFunc(got.Entries, first.Entries, func(a, b pglog.Entry) bool { return a == b }) {
			t.Fatalf("run %d merged differently", i)
		}
	}
}

// The merged PG has purged only the snapshots every part has: a part that
// has not trimmed a snapshot still holds clones of it, which the merged
// PG's trimmer must find.
func TestMergedPurgedSnapsAreCommonToEveryPart(t *testing.T) {
	recorded := map[uint32][2]wire.Version{}
	for s := uint32(16); s < 20; s++ {
		recorded[s] = [2]wire.Version{{}, ver(3, 1)}
	}
	pool := pool16(recorded)
	pool.LastMerge.From = 20
	tgt := copyOf(0, 20, 5, 1, entry("t", 3, 1, 9))
	tgt.Info.PurgedSnaps = osdmap.SnapIntervals{}.Insert(2).Insert(3).Insert(5)
	srcs := map[uint32]*Copy{16: copyOf(16, 20, 5, 0)}
	srcs[16].Info.LastUpdate, srcs[16].Info.LastComplete, srcs[16].Info.LogTail = ver(0, 0), ver(0, 0), ver(0, 0)
	srcs[16].Info.PurgedSnaps = osdmap.SnapIntervals{}.Insert(3).Insert(5).Insert(7)
	got, err := Merge(pool, 0, tgt, srcs, 40)
	if err != nil {
		t.Fatal(err)
	}
	if want := (osdmap.SnapIntervals{}).Insert(3).Insert(5); got.Info.PurgedSnaps.String() != want.String() {
		t.Fatalf("purged snaps %v, want %v", got.Info.PurgedSnaps, want)
	}
}

func TestMergeRefusesWhatNoMergeMakes(t *testing.T) {
	pool := pool16(nil)
	for name, f := range map[string]func() error{
		"target beyond pg_num": func() error { _, err := Merge(pool, 17, copyOf(17, 20, 1, 0), nil, 30); return err },
		"foreign source": func() error {
			_, err := Merge(pool, 3, copyOf(3, 20, 1, 0), map[uint32]*Copy{18: copyOf(18, 20, 1, 0)}, 30)
			return err
		},
		"no copy": func() error { _, err := Merge(pool, 3, nil, nil, 30); return err },
		"log out of order": func() error {
			_, err := Merge(pool, 3, copyOf(3, 20, 1, 0, entry("a", 5, 2, 1), entry("b", 5, 1, 2)), nil, 30)
			return err
		},
	} {
		if err := f(); err == nil {
			t.Errorf("%s: merged", name)
		}
	}
}
