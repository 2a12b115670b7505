package pglog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
	"github.com/cuttlestore/cuttle/osdmap"
)

func entry(epoch, counter, tid uint64) Entry {
	return Entry{Version: wire.Version{Epoch: epoch, Counter: counter}, Kind: Modify,
		Object: objid.Object(1, "", "o"), Req: wire.ReqID{Client: "client.1", Incarnation: 9, Tid: tid}}
}

func TestLog(t *testing.T) {
	l := NewLog(wire.Version{Epoch: 1, Counter: 0})
	for i := uint64(1); i <= 5; i++ {
		if err := l.Append(entry(2, i, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Append(entry(2, 5, 99)); err == nil {
		t.Fatal("appended a version equal to the head")
	}
	if err := l.Append(entry(1, 9, 99)); err == nil {
		t.Fatal("appended an older epoch")
	}
	if l.Head() != (wire.Version{Epoch: 2, Counter: 5}) || l.Len() != 5 {
		t.Fatalf("head %v len %d", l.Head(), l.Len())
	}
	if e, ok := l.Lookup(wire.ReqID{Client: "client.1", Incarnation: 9, Tid: 3}); !ok || e.Version.Counter != 3 {
		t.Fatalf("lookup: %+v %v", e, ok)
	}
	if _, ok := l.Lookup(wire.ReqID{Client: "client.1", Incarnation: 8, Tid: 3}); ok {
		t.Fatal("found another incarnation's request")
	}
	dropped := l.Oldest(l.Len() - 2)
	if n := l.TrimTo(2); n != 3 || len(dropped) != 3 || dropped[2].Version.Counter != 3 || l.Tail() != (wire.Version{Epoch: 2, Counter: 3}) || l.Len() != 2 {
		t.Fatalf("trim: %d dropped, tail %v", len(dropped), l.Tail())
	}
	if _, ok := l.Lookup(wire.ReqID{Client: "client.1", Incarnation: 9, Tid: 2}); ok {
		t.Fatal("trimmed request still found")
	}
	if e, ok := l.Lookup(wire.ReqID{Client: "client.1", Incarnation: 9, Tid: 5}); !ok || e.Version.Counter != 5 {
		t.Fatalf("lookup after trim: %+v %v", e, ok)
	}
	if err := l.Append(entry(3, 6, 6)); err != nil {
		t.Fatal(err)
	}
	if e, ok := l.Lookup(wire.ReqID{Client: "client.1", Incarnation: 9, Tid: 6}); !ok || e.Version.Epoch != 3 {
		t.Fatalf("lookup of a new entry after trim: %+v %v", e, ok)
	}
	if l.TrimTo(10) != 0 {
		t.Fatal("trimmed below the limit")
	}
}

func apply(t *testing.T, s objectstore.Store, txn *objectstore.Transaction) {
	t.Helper()
	if err := objectstore.Apply(context.Background(), s, txn); err != nil {
		t.Fatal(err)
	}
}

func TestPersist(t *testing.T) {
	s := memstore.New(memstore.Options{})
	defer s.Close()
	pg := osdmap.PG{Pool: 3, Seed: 0x1a}
	info := Info{PG: pg, EpochCreated: 4, SameIntervalSince: 4}
	var txn objectstore.Transaction
	CreateTxn(&txn, info)
	apply(t, s, &txn)

	l := NewLog(info.LogTail)
	for i := uint64(1); i <= 3000; i++ { // more than one Load batch
		txn = objectstore.Transaction{}
		e := entry(5, i, i)
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
		info.LastUpdate, info.LastComplete = e.Version, e.Version
		AppendTxn(&txn, pg, e)
		SaveInfoTxn(&txn, info)
		apply(t, s, &txn)
	}
	txn = objectstore.Transaction{}
	TrimTxn(&txn, pg, l.Oldest(l.Len()-1000))
	l.TrimTo(1000)
	info.LogTail = l.Tail()
	SaveInfoTxn(&txn, info)
	apply(t, s, &txn)

	gotInfo, gotLog, err := Load(context.Background(), s, pg)
	if err != nil {
		t.Fatal(err)
	}
	if !gotInfo.Equal(info) || gotLog.Len() != 1000 || gotLog.Tail() != l.Tail() || gotLog.Head() != l.Head() {
		t.Fatalf("loaded info %+v, log %d entries %v..%v", gotInfo, gotLog.Len(), gotLog.Tail(), gotLog.Head())
	}
	if !reflect.DeepEqual(gotLog.Entries(), l.Entries()) {
		t.Fatal("loaded entries differ")
	}
	// A trim across an epoch change keeps exactly the entries after it.
	for i := uint64(1); i <= 20; i++ {
		e := entry(6, i, 3000+i)
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
		txn = objectstore.Transaction{}
		AppendTxn(&txn, pg, e)
		apply(t, s, &txn)
	}
	txn = objectstore.Transaction{}
	TrimTxn(&txn, pg, l.Oldest(l.Len()-10))
	l.TrimTo(10)
	info.LastUpdate, info.LastComplete, info.LogTail = l.Head(), l.Head(), l.Tail()
	SaveInfoTxn(&txn, info)
	apply(t, s, &txn)
	if _, gotLog, err = Load(context.Background(), s, pg); err != nil || !reflect.DeepEqual(gotLog.Entries(), l.Entries()) {
		t.Fatalf("after a trim across epochs: %v, %d entries loaded", err, gotLog.Len())
	}
	// The meta object sorts before client objects and never in their pool.
	if MetaObject(pg).Pool >= 0 {
		t.Fatal("meta object in a client pool")
	}
	if _, _, err := Load(context.Background(), s, osdmap.PG{Pool: 3, Seed: 1}); err == nil {
		t.Fatal("loaded a PG that does not exist")
	}
}

func TestLoadDamaged(t *testing.T) {
	pg := osdmap.PG{Pool: 1, Seed: 0}
	c, meta := objectstore.PGCollection(1, 0), MetaObject(pg)
	for name, damage := range map[string]func(*objectstore.Transaction){
		"no info":      func(t *objectstore.Transaction) { t.OmapRmKeys(c, meta, infoKey) },
		"garbage info": func(t *objectstore.Transaction) { t.OmapSetKeys(c, meta, map[string][]byte{infoKey: []byte("x")}) },
		"other pg": func(t *objectstore.Transaction) {
			t.OmapSetKeys(c, meta, map[string][]byte{infoKey: Info{PG: osdmap.PG{Pool: 1, Seed: 7}}.Encode()})
		},
		"garbage entry": func(t *objectstore.Transaction) {
			t.OmapSetKeys(c, meta, map[string][]byte{logKey(wire.Version{Epoch: 1, Counter: 1}): {1, 2}})
		},
		"head mismatch": func(t *objectstore.Transaction) { AppendTxn(t, pg, entry(1, 1, 1)) },
	} {
		t.Run(name, func(t *testing.T) {
			s := memstore.New(memstore.Options{})
			defer s.Close()
			var txn objectstore.Transaction
			CreateTxn(&txn, Info{PG: pg})
			damage(&txn)
			apply(t, s, &txn)
			if _, _, err := Load(context.Background(), s, pg); err == nil || !strings.Contains(err.Error(), "pglog: 1.0") {
				t.Fatalf("loaded a damaged PG: %v", err)
			}
		})
	}
}

func TestLogKey(t *testing.T) {
	v := wire.Version{Epoch: 0xabc, Counter: 1 << 40}
	if got, ok := ParseLogKey(logKey(v)); !ok || got != v {
		t.Fatalf("parse %q: %v %v", logKey(v), got, ok)
	}
	for _, bad := range []string{"", "info", "log.", "log.000000000000000x.0000000000000001", logKey(v) + "0"} {
		if _, ok := ParseLogKey(bad); ok {
			t.Errorf("parsed %q", bad)
		}
	}
	for _, v := range []wire.Version{{}, v, {Epoch: 1<<64 - 1, Counter: 0x0123456789abcdef}} {
		if want := fmt.Sprintf("log.%016x.%016x", v.Epoch, v.Counter); logKey(v) != want {
			t.Errorf("logKey(%v) = %q, want %q (the on-disk form)", v, logKey(v), want)
		}
	}
	if !(logKey(wire.Version{Epoch: 1, Counter: 0xffff}) < logKey(wire.Version{Epoch: 2, Counter: 0})) {
		t.Fatal("keys do not sort by version")
	}
}

// FuzzDecoders: entries and infos never panic the decoders and round-trip.
func FuzzDecoders(f *testing.F) {
	f.Add(entry(1, 2, 3).Encode())
	f.Add(Info{PG: osdmap.PG{Pool: 1, Seed: 2}, LastUpdate: wire.Version{Epoch: 3, Counter: 4}}.Encode())
	f.Add(Info{PG: osdmap.PG{Pool: 1, Seed: 2}, PurgedSnaps: osdmap.SnapIntervals{{Start: 2, Len: 5}, {Start: 9, Len: 1}}}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if e, err := DecodeEntry(b); err == nil {
			if again, err := DecodeEntry(e.Encode()); err != nil || again != e {
				t.Fatalf("entry round trip: %v", err)
			}
		}
		if i, err := DecodeInfo(b); err == nil {
			if again, err := DecodeInfo(i.Encode()); err != nil || !again.Equal(i) {
				t.Fatalf("info round trip: %v", err)
			}
		}
	})
}

// The missing set survives with the log: recorded, each object cleared
// as it is recovered, all cleared at once, and damaged records refused.
func TestPersistMissing(t *testing.T) {
	s := memstore.New(memstore.Options{})
	defer s.Close()
	pg := osdmap.PG{Pool: 3, Seed: 7}
	var txn objectstore.Transaction
	CreateTxn(&txn, Info{PG: pg})
	var ids []objid.ID
	for i := range 1500 { // more than one load batch
		ids = append(ids, objid.Object(3, "ns", fmt.Sprint("obj-", i)))
	}
	SetMissingTxn(&txn, pg, ids...)
	apply(t, s, &txn)
	txn = objectstore.Transaction{}
	RecoveredTxn(&txn, pg, ids[0])
	apply(t, s, &txn)
	got, err := LoadMissing(context.Background(), s, pg)
	if err != nil || len(got) != len(ids)-1 || got[ids[0]] || !got[ids[1]] || !got[ids[1499]] {
		t.Fatalf("loaded %d missing, %v", len(got), err)
	}
	if _, _, err := Load(context.Background(), s, pg); err != nil {
		t.Fatalf("missing records disturb the log: %v", err)
	}
	txn = objectstore.Transaction{}
	c, meta := objectstore.PGCollection(pg.Pool, pg.Seed), MetaObject(pg)
	txn.OmapSetKeys(c, meta, map[string][]byte{missingPrefix + "zz": []byte("garbage")})
	apply(t, s, &txn)
	if _, err := LoadMissing(context.Background(), s, pg); err == nil {
		t.Fatal("a damaged missing record loaded")
	}
	txn = objectstore.Transaction{}
	ClearMissingTxn(&txn, pg)
	apply(t, s, &txn)
	if got, err := LoadMissing(context.Background(), s, pg); err != nil || len(got) != 0 {
		t.Fatalf("after clearing: %d missing, %v", len(got), err)
	}
}

// A full log trimmed by one entry at each append, as a PG's is at every
// write, must not copy what it keeps each time (it did, and that was 15%
// of an OSD's CPU), nor allocate for each entry: the log moves to a new
// array, and its arena is compacted, only now and then. The log
// stays right across those moves.
func TestTrimKeepsTheLogInPlace(t *testing.T) {
	const keep = 3000
	l := NewLog(wire.Version{Epoch: 1})
	next := uint64(1)
	step := func() {
		if err := l.Append(entry(2, next, next)); err != nil {
			t.Fatal(err)
		}
		next++
		l.TrimTo(keep)
	}
	for range keep {
		step()
	}
	if allocs := testing.AllocsPerRun(2000, step); allocs > 0.5 {
		t.Errorf("%.2f allocations per append and trim of a full log, want almost none", allocs)
	}
	if l.Len() != keep || l.Head().Counter != next-1 || l.Tail().Counter != next-1-keep {
		t.Fatalf("len %d head %v tail %v after %d appends", l.Len(), l.Head(), l.Tail(), next-1)
	}
	for _, tid := range []uint64{next - keep, next - 1, next / 2} {
		e, ok := l.Lookup(wire.ReqID{Client: "client.1", Incarnation: 9, Tid: tid})
		if want := tid >= next-keep; ok != want || ok && e.Version.Counter != tid {
			t.Errorf("lookup of tid %d: %+v, %v (want found %v)", tid, e, ok, want)
		}
	}
	for i, e := range l.Entries() {
		if e.Version.Counter != next-keep+uint64(i) {
			t.Fatalf("entry %d is %v", i, e.Version)
		}
	}
}

// The packed log agrees with a plain list of entries through random
// appends (names and clients of every length, empty ones too), trims
// (which compact the string arena now and then) and lookups.
func TestPackedLogMatchesAModel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	l := NewLog(wire.Version{Epoch: 1})
	var model []Entry
	str := func(prefix string) string {
		if r.IntN(4) == 0 {
			return ""
		}
		return prefix + strings.Repeat("x", r.IntN(300))
	}
	for step := range 20000 {
		switch {
		case r.IntN(10) < 7:
			e := Entry{Version: wire.Version{Epoch: 2, Counter: uint64(step + 1)}, Prior: wire.Version{Epoch: 1, Counter: uint64(step)},
				Kind: Kind(1 + r.IntN(2)), Result: -int32(r.IntN(3)),
				Object: objid.New(int64(r.IntN(3)), str("ns"), str("key"), "obj"+str("n"), uint64(r.IntN(2))),
				Req:    wire.ReqID{Client: str("client."), Incarnation: uint64(r.IntN(2)), Tid: uint64(step)}}
			if err := l.Append(e); err != nil {
				t.Fatal(err)
			}
			model = append(model, e)
		case r.IntN(2) == 0:
			keep := r.IntN(len(model) + 1)
			if got, want := l.TrimTo(keep), max(0, len(model)-keep); got != want {
				t.Fatalf("step %d: trimmed %d, want %d", step, got, want)
			}
			if len(model) > keep {
				model = model[len(model)-keep:]
			}
		default:
			// A version anywhere from before the tail to past the head.
			v := wire.Version{Epoch: 2, Counter: uint64(r.IntN(step + 2))}
			want := 0
			for want < len(model) && !v.Less(model[want].Version) {
				want++
			}
			if got := l.TrimThrough(v); got != want {
				t.Fatalf("step %d: trimmed %d through %v, want %d", step, got, v, want)
			}
			if want > 0 && l.Tail() != model[want-1].Version {
				t.Fatalf("step %d: tail %v after trimming through %v, want %v", step, l.Tail(), v, model[want-1].Version)
			}
			model = model[want:]
		}
		if step%64 == 0 { // the whole structure, which -tags invariants checks at the ends after each change
			if err := l.verify(); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		if i := len(model) - 1 - r.IntN(max(1, len(model))); i >= 0 && model[i].Req.Client != "" {
			if e, ok := l.Lookup(model[i].Req); !ok || !reflect.DeepEqual(e, model[i]) {
				t.Fatalf("step %d: lookup of %v: %+v, %v; want %+v", step, model[i].Req, e, ok, model[i])
			}
		}
	}
	if got := l.Entries(); !reflect.DeepEqual(got, model) && !(len(got) == 0 && len(model) == 0) {
		t.Fatalf("entries differ from the model (%d and %d)", len(got), len(model))
	}
}

// The purged snaps round-trip, and an info of version 2 (before them)
// still decodes, with none purged.
func TestInfoPurgedSnapsAndVersion2(t *testing.T) {
	info := Info{PG: osdmap.PG{Pool: 3, Seed: 9}, EpochCreated: 2, LastUpdate: wire.Version{Epoch: 5, Counter: 7},
		LastScrub: 11, PurgedSnaps: osdmap.SnapIntervals{{Start: 1, Len: 3}, {Start: 9, Len: 1}}}
	got, err := DecodeInfo(info.Encode())
	if err != nil || !got.Equal(info) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	e.Varint(3)
	e.Uint32(9)
	e.Uvarint(2)
	for _, v := range []uint64{5, 7, 0, 0, 0, 0} {
		e.Uvarint(v)
	}
	e.Uvarint(0)
	e.Uvarint(0)
	e.Varint(0)
	e.Varint(0)
	e.Varint(11)
	e.Varint(0)
	e.End(mk)
	old, err := DecodeInfo(e.Data())
	want := info
	want.PurgedSnaps = nil
	if err != nil || !old.Equal(want) {
		t.Fatalf("version 2: %+v, %v; want %+v", old, err, want)
	}
	// Overlapping purged intervals are refused.
	bad := info
	bad.PurgedSnaps = osdmap.SnapIntervals{{Start: 1, Len: 3}, {Start: 2, Len: 1}}
	if _, err := DecodeInfo(bad.Encode()); !errors.Is(err, encoding.ErrCorrupt) {
		t.Fatalf("overlapping purged snaps: %v", err)
	}
}
