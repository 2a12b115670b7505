package blockstore

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/bits"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/alloc"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

// The checks of one Fsck run, in the order run calls them; what each
// finds becomes an FsckProblem of its kind.

// checkKeys looks for keys of no known prefix.
func (f *fsck) checkKeys() error {
	it, err := f.db.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
	for valid := it.First(); valid; {
		k := it.Key()
		switch k[0] {
		case format.PrefixSuper, format.PrefixNextNid:
			if len(k) == 1 {
				valid = it.Next()
				continue
			}
		case format.PrefixCollection, format.PrefixObject, format.PrefixOmap, format.PrefixUnit, format.PrefixShard, format.PrefixDeferred, format.PrefixBitmap, format.PrefixPoolStats:
			valid = it.SeekGE([]byte{k[0] + 1})
			continue
		}
		f.add(FsckProblem{Kind: ProblemUnknownKey, Key: fmt.Sprintf("%x", k), Detail: "key with no known prefix"})
		valid = it.Next()
	}
	return it.Error()
}

func (f *fsck) checkNextNid() error {
	v, closer, err := f.db.Get([]byte{format.PrefixNextNid})
	if errors.Is(err, pebble.ErrNotFound) {
		f.add(FsckProblem{Kind: ProblemMissingCounter, Detail: "no node-id counter"})
		return nil
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	n, err := format.DecodeUvarint(v)
	if err != nil || n == 0 {
		f.add(FsckProblem{Kind: ProblemUndecodable, Key: fmt.Sprintf("%x", []byte{format.PrefixNextNid}), Detail: fmt.Sprintf("node-id counter %d: %v", n, err)})
		return nil
	}
	f.nextNid = n
	return nil
}

func (f *fsck) checkCollections() error {
	it, err := f.iter(format.PrefixCollection)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		c, err := format.DecodeColl(it.Key()[1:])
		if err == nil {
			err = format.DecodeEmpty(it.Value())
		}
		if err != nil {
			f.add(FsckProblem{Kind: ProblemUndecodable, Key: fmt.Sprintf("%x", it.Key()), Detail: fmt.Sprintf("collection: %v", err)})
			continue
		}
		f.colls[c] = true
	}
	f.rep.Collections = len(f.colls)
	return it.Error()
}

func (f *fsck) checkBitmap() error {
	it, err := f.iter(format.PrefixBitmap)
	if err != nil {
		return err
	}
	defer it.Close()
	f.regions = make(map[uint64][]byte)
	const wordsPerRegion = format.BitmapRegionUnits / 64
	units := f.sb.Units()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != 9 {
			f.add(FsckProblem{Kind: ProblemUndecodable, Key: fmt.Sprintf("%x", k), Detail: "bitmap key of the wrong length"})
			continue
		}
		r := beUint64(k[1:])
		words, err := format.DecodeBitmap(it.Value())
		if err != nil {
			f.add(FsckProblem{Kind: ProblemUndecodable, Key: fmt.Sprintf("%x", k), Detail: fmt.Sprintf("bitmap region %d: %v", r, err)})
			f.regions[r] = slices.Clone(it.Value())
			continue
		}
		if r >= (units+format.BitmapRegionUnits-1)/format.BitmapRegionUnits {
			f.add(FsckProblem{Kind: ProblemBitmapBeyond, Key: fmt.Sprintf("%x", k), Detail: fmt.Sprintf("bitmap region %d lies beyond the device", r)})
			f.regions[r] = slices.Clone(it.Value())
			continue
		}
		f.regions[r] = slices.Clone(it.Value())
		first := r * wordsPerRegion
		for i, w := range words {
			if first+uint64(i) >= uint64(len(f.bitmap)) {
				if w != 0 {
					f.add(FsckProblem{Kind: ProblemBitmapBeyond, Key: fmt.Sprintf("%x", k), Detail: fmt.Sprintf("bitmap region %d marks units beyond the device", r)})
				}
				continue
			}
			f.bitmap[first+uint64(i)] = w
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	// Bits of the last word past the last unit.
	if tail := units % 64; tail != 0 {
		last := &f.bitmap[len(f.bitmap)-1]
		if extra := *last &^ (1<<tail - 1); extra != 0 {
			f.add(FsckProblem{Kind: ProblemBitmapBeyond, DevOffset: units * f.sb.AllocUnit,
				Detail: fmt.Sprintf("bitmap marks %d units beyond the device", bits.OnesCount64(extra))})
			*last &^= extra
		}
	}
	var used uint64
	for _, w := range f.bitmap {
		used += uint64(bits.OnesCount64(w))
	}
	f.rep.BytesUsed = used * f.sb.AllocUnit
	f.rep.BytesFree = f.sb.Size - f.rep.BytesUsed
	// The allocator loaded from the bitmap must agree: free + used = size.
	a, err := alloc.New(f.sb.Size, f.sb.AllocUnit)
	if err != nil {
		return fmt.Errorf("allocator: %w", err)
	}
	var runErr error
	forRuns(f.bitmap, units, func(start, n uint64) {
		if err := a.MarkUsed(alloc.Extent{Offset: start * f.sb.AllocUnit, Length: n * f.sb.AllocUnit}); err != nil && runErr == nil {
			runErr = err
		}
	})
	switch {
	case runErr != nil:
		f.add(FsckProblem{Kind: ProblemAllocator, Detail: fmt.Sprintf("bitmap does not load: %v", runErr)})
	case a.Free()+f.rep.BytesUsed != f.sb.Size:
		f.add(FsckProblem{Kind: ProblemAllocator, Detail: fmt.Sprintf("allocator free %d + used %d != size %d", a.Free(), f.rep.BytesUsed, f.sb.Size)})
	}
	return nil
}

// forRuns calls fn for each run of set bits among the first units bits.
func forRuns(bm []uint64, units uint64, fn func(start, n uint64)) {
	var start, n uint64
	for u := uint64(0); u < units; u++ {
		if bm[u/64]&(1<<(u%64)) != 0 {
			if n == 0 {
				start = u
			}
			n++
			continue
		}
		if n > 0 {
			fn(start, n)
			n = 0
		}
	}
	if n > 0 {
		fn(start, n)
	}
}

func (f *fsck) checkDeferred() error {
	ws, logErr, err := f.deferredWrites()
	if err != nil {
		return err
	}
	cb := f.sb.ChecksumBlock
	for _, p := range ws {
		k := p.key
		if p.w.Data == nil {
			detail := "deferred write whose data is in no WAL file"
			if logErr != nil {
				detail += " (" + logErr.Error() + ")"
			}
			f.add(FsckProblem{Kind: ProblemBadDeferred, Key: fmt.Sprintf("%x", k), Detail: detail})
			continue
		}
		if p.w.DevOff != beUint64(k[9:]) {
			f.add(FsckProblem{Kind: ProblemBadDeferred, Key: fmt.Sprintf("%x", k),
				Detail: fmt.Sprintf("value's device offset %d differs from the key's %d", p.w.DevOff, beUint64(k[9:]))})
			continue
		}
		f.rep.PendingDeferred++
		if f.fo.Deep {
			// Key order is commit order: a later write to a block wins,
			// as it does when Open replays them.
			for off := uint64(0); off < uint64(len(p.w.Data)); off += cb {
				f.overlay[p.w.DevOff+off] = p.w.Data[off : off+cb]
			}
		}
	}
	return nil
}

// deferredWrites returns the well-formed 'D' keys with their writes (the
// data of logged ones read from the WAL files, nil where none has it;
// logErr: WALs that could not be read), and reports the malformed ones.
func (f *fsck) deferredWrites() (ws []*pendingWrite, logErr error, err error) {
	all, err := scanDeferred(f.db, []byte{format.PrefixDeferred}, []byte{format.PrefixDeferred + 1}, f.sb, func(k []byte, err error) error {
		f.add(FsckProblem{Kind: ProblemBadDeferred, Key: fmt.Sprintf("%x", k), Detail: err.Error()})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, p := range all {
		if len(p.key) != 17 {
			f.add(FsckProblem{Kind: ProblemBadDeferred, Key: fmt.Sprintf("%x", p.key), Detail: "deferred-write key of the wrong length"})
			continue
		}
		ws = append(ws, p)
	}
	return ws, fillLogged(f.fs, f.dbPath, f.sb, ws), nil
}

func (f *fsck) checkObjects() error {
	if err := f.scanObjects(f.checkObject, true); err != nil {
		return err
	}
	if len(f.conflicts) == 0 {
		return nil
	}
	// Second pass: name every owner of each unit mapped more than once.
	if err := f.scanObjects(func(c objectstore.CollectionID, o objid.ID, rec *format.Onode) error {
		name := c.String() + " " + o.String()
		for u := range rec.Units.All() {
			if owners, ok := f.conflicts[u.Dev/f.sb.AllocUnit]; ok {
				f.conflicts[u.Dev/f.sb.AllocUnit] = append(owners, fmt.Sprintf("%s at %d", name, u.LU*f.sb.AllocUnit))
			}
		}
		return nil
	}, false); err != nil {
		return err
	}
	for _, unit := range slices.Sorted(maps.Keys(f.conflicts)) {
		owners := f.conflicts[unit]
		p := FsckProblem{Kind: ProblemOverlap, DevOffset: unit * f.sb.AllocUnit, Length: f.sb.AllocUnit,
			Detail: fmt.Sprintf("unit mapped %d times: %s", len(owners), strings.Join(owners, "; "))}
		f.add(p)
	}
	return nil
}

// scanObjects calls fn for every object record that decodes and, if
// report, reports those that do not.
func (f *fsck) scanObjects(fn func(objectstore.CollectionID, objid.ID, *format.Onode) error, report bool) error {
	it, err := f.iter(format.PrefixObject)
	if err != nil {
		return err
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if n++; n%1024 == 0 {
			if err := f.ctx.Err(); err != nil {
				return err
			}
		}
		c, o, err := format.DecodeObjectKey(it.Key())
		if err != nil {
			if report {
				f.badRecords++
				f.add(FsckProblem{Kind: ProblemUndecodable, Key: fmt.Sprintf("%x", it.Key()), Detail: fmt.Sprintf("object key: %v", err)})
			}
			continue
		}
		rec, err := format.DecodeRecord(bytes.Clone(it.Value()), f.sb)
		if err == nil && !rec.Inline {
			rec.Units, err = loadUnits(f.db, rec.Nid, f.sb, rec.Shards)
		}
		if err != nil {
			if report {
				f.badRecords++
				f.add(FsckProblem{Kind: ProblemUndecodable, Collection: c.String(), Object: o.String(), Key: fmt.Sprintf("%x", it.Key()), Detail: err.Error()})
			}
			continue
		}
		if err := fn(c, o, rec); err != nil {
			return err
		}
	}
	return it.Error()
}

// checkObject checks one decoded record.
func (f *fsck) checkObject(c objectstore.CollectionID, o objid.ID, rec *format.Onode) error {
	f.rep.Objects++
	au := f.sb.AllocUnit
	name := c.String() + " " + o.String()
	prob := func(kind ProblemKind, off, dev, length uint64, format string, args ...any) {
		f.add(FsckProblem{Kind: kind, Collection: c.String(), Object: o.String(), Offset: off, DevOffset: dev, Length: length, Detail: fmt.Sprintf(format, args...)})
	}
	if !f.colls[c] {
		prob(ProblemNoCollection, 0, 0, 0, "collection %v does not exist", c)
	}
	if prev, dup := f.nids[rec.Nid]; dup {
		prob(ProblemDuplicateNid, 0, 0, 0, "node id %d also belongs to %s", rec.Nid, prev)
	} else {
		f.nids[rec.Nid] = name
		switch {
		case rec.Shards:
			f.unitsUnder[rec.Nid] = format.PrefixShard
		case !rec.Inline:
			f.unitsUnder[rec.Nid] = format.PrefixUnit
		}
	}
	if f.nextNid != 0 && rec.Nid >= f.nextNid {
		prob(ProblemNidNotIssued, 0, 0, 0, "node id %d is not below the counter %d: it would be issued again", rec.Nid, f.nextNid)
	}
	for _, x := range rec.Pages {
		for lu := x.Off / au; lu <= (x.End-1)/au; lu++ {
			if _, ok := rec.Units.Get(lu); !ok {
				prob(ProblemPageUnmapped, lu*au, 0, au, "allocated pages %d-%d lie in unmapped unit %d", x.Off, x.End, lu)
				break
			}
		}
	}
	stored := rec.AllocatedBytes()
	f.stored[statsPool(c)] += stored
	f.rep.BytesStored += stored
	var prev format.Unit
	i := 0
	for u := range rec.Units.All() {
		if i == 0 || u.LU != prev.LU+1 || u.Dev != prev.Dev+au {
			f.rep.Extents++
		}
		prev = u
		i++
		du := u.Dev / au
		bit := uint64(1) << (du % 64)
		if f.owned[du/64]&bit != 0 {
			f.conflicts[du] = nil
		} else {
			f.owned[du/64] |= bit
			f.rep.BytesOwned += au
		}
		if f.bitmap[du/64]&bit == 0 {
			prob(ProblemOwnedFree, u.LU*au, u.Dev, au, "mapped unit marked free in the bitmap")
		}
		if f.fo.Deep {
			f.verifyUnit(c, o, rec, u)
		}
	}
	return nil
}

// verifyUnit reads rec's unit u and checks the checksums of its blocks
// that hold data (blocks without a marked page may never have been
// written: format.HoldsData).
func (f *fsck) verifyUnit(c objectstore.CollectionID, o objid.ID, rec *format.Onode, u format.Unit) {
	au, cb := f.sb.AllocUnit, f.sb.ChecksumBlock
	buf := make([]byte, au)
	n, err := f.file.ReadAt(buf, int64(u.Dev))
	if err != nil && err != io.EOF {
		f.add(FsckProblem{Kind: ProblemReadError, Collection: c.String(), Object: o.String(), Offset: u.LU * au, DevOffset: u.Dev, Length: au, Detail: err.Error()})
		return
	}
	clear(buf[n:]) // a data file never written this far reads as zeros
	for b := range u.NumSums() {
		want := u.Sum(b)
		if bs := u.LU*au + uint64(b)*cb; !format.HoldsData(rec.Pages, bs, bs+cb) {
			continue
		}
		dev := u.Dev + uint64(b)*cb
		blk := buf[uint64(b)*cb : uint64(b+1)*cb]
		if d, ok := f.overlay[dev]; ok {
			blk = d
		}
		f.rep.BlocksVerified++
		if got := crc32.Checksum(blk, f.table); got != want {
			f.add(FsckProblem{Kind: ProblemChecksum, Collection: c.String(), Object: o.String(), Offset: u.LU*au + uint64(b)*cb, DevOffset: dev, Length: cb,
				Detail: fmt.Sprintf("crc32c %08x, record says %08x", got, want)})
		}
	}
}

func (f *fsck) checkOmap() error {
	return f.checkNodeKeys(format.PrefixOmap, "omap entries", ProblemOrphanOmap, &f.rep.OmapEntries, &f.orphanNids, nil)
}

// checkUnitKeys reports unit and shard keys of node ids no object has,
// and of objects that keep their units elsewhere (nothing reads those
// keys).
func (f *fsck) checkUnitKeys() error {
	var n uint64
	for _, k := range []struct {
		prefix  byte
		what    string
		orphans *[]uint64
	}{{format.PrefixUnit, "unit keys", &f.orphanUnits}, {format.PrefixShard, "unit shard keys", &f.orphanShards}} {
		elsewhere := func(nid uint64) bool { return f.unitsUnder[nid] != k.prefix }
		if err := f.checkNodeKeys(k.prefix, k.what, ProblemOrphanUnits, &n, k.orphans, elsewhere); err != nil {
			return err
		}
	}
	return nil
}

// checkNodeKeys counts the keys under prefix, which all start with a
// node id, and reports those of node ids no object has, or that unused
// holds.
func (f *fsck) checkNodeKeys(prefix byte, what string, kind ProblemKind, count *uint64, orphans *[]uint64, unused func(nid uint64) bool) error {
	it, err := f.iter(prefix)
	if err != nil {
		return err
	}
	defer it.Close()
	for valid := it.First(); valid; {
		k := it.Key()
		if len(k) < 9 {
			f.add(FsckProblem{Kind: ProblemUndecodable, Key: fmt.Sprintf("%x", k), Detail: what + " key shorter than a node id"})
			valid = it.Next()
			continue
		}
		nid := beUint64(k[1:9])
		_, has := f.nids[nid]
		if has && (unused == nil || !unused(nid)) {
			*count++
			valid = it.Next()
			continue
		}
		// An orphaned node: count its keys and report it once.
		var n uint64
		p := k[:9:9]
		p = append([]byte(nil), p...)
		for ; valid && bytes.HasPrefix(it.Key(), p); valid = it.Next() {
			n++
		}
		*count += n
		*orphans = append(*orphans, nid)
		why := "which no object has"
		if has {
			why = "whose object keeps its units elsewhere"
			if f.unitsUnder[nid] == 0 {
				why = "whose object keeps its units inline"
			}
		}
		f.add(FsckProblem{Kind: kind, Key: fmt.Sprintf("%x", p), Detail: fmt.Sprintf("%d %s of node id %d, %s", n, what, nid, why)})
	}
	return it.Error()
}

func (f *fsck) checkPoolStats() error {
	it, err := f.iter(format.PrefixPoolStats)
	if err != nil {
		return err
	}
	defer it.Close()
	f.storedCounter = make(map[int64]uint64)
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != 9 {
			f.add(FsckProblem{Kind: ProblemUndecodable, Key: fmt.Sprintf("%x", k), Detail: "pool counter key of the wrong length"})
			continue
		}
		v, err := format.DecodeUvarint(it.Value())
		if err != nil {
			f.add(FsckProblem{Kind: ProblemUndecodable, Key: fmt.Sprintf("%x", k), Detail: fmt.Sprintf("pool counter: %v", err)})
			continue
		}
		f.storedCounter[int64(beUint64(k[1:])^(1<<63))] = v
	}
	if err := it.Error(); err != nil {
		return err
	}
	if f.badRecords > 0 {
		return nil // the sums are incomplete
	}
	pools := slices.Sorted(maps.Keys(f.stored))
	for p := range f.storedCounter {
		if _, ok := f.stored[p]; !ok {
			pools = append(pools, p)
		}
	}
	for _, p := range pools {
		if got, want := f.storedCounter[p], f.stored[p]; got != want {
			name := fmt.Sprintf("pool %d", p)
			if p == metaPool {
				name = "the meta collection"
			}
			f.add(FsckProblem{Kind: ProblemPoolStats, Detail: fmt.Sprintf("stored bytes of %s: counter %d, records %d", name, got, want)})
		}
	}
	return nil
}

// compareBitmap reports units used but not owned (leaked, as runs).
// Owned-but-free units were reported per object.
func (f *fsck) compareBitmap() {
	leaked := make([]uint64, len(f.bitmap))
	for i := range leaked {
		leaked[i] = f.bitmap[i] &^ f.owned[i]
	}
	au := f.sb.AllocUnit
	forRuns(leaked, f.sb.Units(), func(start, n uint64) {
		f.add(FsckProblem{Kind: ProblemLeaked, DevOffset: start * au, Length: n * au,
			Detail: fmt.Sprintf("%d units marked used that no object maps", n)})
	})
}
