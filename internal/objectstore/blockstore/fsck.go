package blockstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/bits"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/alloc"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/objid"
)

// Fsck: an offline consistency check of a closed store.
//
// Fsck opens the Pebble database and the data file itself, never through
// Open: it replays nothing, loads no allocator and starts no committer, so
// a store that Open refuses (a bitmap marking units beyond the device, an
// undecodable deferred write) can still be checked. Pebble's directory
// lock keeps it from running against a store another process has open.
// Without FsckOptions.Repair the database is opened read-only and nothing
// on disk changes.
//
// What it checks:
//
//   - every key has a known prefix and the length its prefix implies, and
//     every value decodes (superblock, node-id counter, collections,
//     object records, bitmap regions, pool counters, deferred writes);
//   - every object record lies in an existing collection, has a node id
//     of its own that is below the node-id counter, and every allocated
//     page of it lies in a mapped unit;
//   - every allocation unit an object record maps is mapped by that
//     record only (no overlaps), and the persisted bitmap marks it used
//     (otherwise: owned-free, the allocator could hand it out again);
//   - every unit the bitmap marks used is mapped by a record (otherwise:
//     leaked space), and no bit lies beyond the device;
//   - an allocator loaded from the bitmap has free plus used equal to the
//     device size;
//   - every omap entry belongs to the node id of an existing object;
//   - the per-pool stored-bytes counters equal the sums over the records;
//   - with FsckOptions.Deep, every checksum block of every mapped unit
//     that holds an allocated page (the others read as zeros and may
//     never have been written) is read and its crc32c verified, with
//     pending deferred writes (a
//     crash between commit and apply) laid over the file as Open would
//     replay them.
//
// Repair fixes only what is derived metadata, in one synced Pebble batch:
// it rewrites the bitmap regions so that they mark exactly the units the
// records map (freeing leaked space, clearing bits beyond the device,
// marking owned-but-free units used), deletes orphaned omap entries and
// rewrites wrong pool counters. It never writes the data file and never
// changes or deletes an object record, a collection or a deferred write.
// If any object record fails to decode, the units and node id it would
// name are unknown, so repair then frees nothing, deletes nothing and
// leaves the counters: it only marks owned-but-free units used. The
// report says so in RepairSkipped.

// FsckOptions choose what Fsck does beyond the metadata checks.
type FsckOptions struct {
	// Deep reads every mapped unit and verifies the checksums of its
	// blocks that hold data.
	Deep bool
	// Repair fixes the metadata problems that can be fixed safely (see
	// above). Without it the store is opened read-only.
	Repair bool
}

// ProblemKind classifies an inconsistency Fsck found.
type ProblemKind string

// The kinds of problem Fsck reports. Those marked repairable are fixed by
// FsckOptions.Repair (subject to the rule on undecodable records).
const (
	ProblemUndecodable    ProblemKind = "undecodable"          // a key or value does not decode
	ProblemUnknownKey     ProblemKind = "unknown-key"          // a key with no known prefix
	ProblemNoCollection   ProblemKind = "no-collection"        // an object in a collection that does not exist
	ProblemDuplicateNid   ProblemKind = "duplicate-nid"        // two objects share a node id (and so an omap)
	ProblemNidNotIssued   ProblemKind = "nid-not-issued"       // a node id at or above the node-id counter
	ProblemPageUnmapped   ProblemKind = "page-unmapped"        // an allocated page outside every mapped unit
	ProblemOverlap        ProblemKind = "overlap"              // a unit mapped by more than one object or twice
	ProblemOwnedFree      ProblemKind = "owned-free"           // repairable: a mapped unit the bitmap marks free
	ProblemLeaked         ProblemKind = "leaked"               // repairable: units marked used that no object maps
	ProblemBitmapBeyond   ProblemKind = "bitmap-beyond-device" // repairable: bitmap bits past the last unit
	ProblemAllocator      ProblemKind = "allocator"            // the bitmap does not load into an allocator
	ProblemOrphanOmap     ProblemKind = "orphan-omap"          // repairable: omap entries of a node id no object has
	ProblemOrphanUnits    ProblemKind = "orphan-units"         // repairable: unit keys of a node id no object has
	ProblemPoolStats      ProblemKind = "pool-stats"           // repairable: a stored-bytes counter disagrees with the records
	ProblemBadDeferred    ProblemKind = "bad-deferred"         // a deferred-write key or value is malformed
	ProblemChecksum       ProblemKind = "checksum"             // a checksum block does not verify (Deep)
	ProblemReadError      ProblemKind = "read-error"           // the data file could not be read (Deep)
	ProblemMissingCounter ProblemKind = "missing-counter"      // the node-id counter is absent
)

// Repairable reports whether Repair can fix problems of kind k.
func (k ProblemKind) Repairable() bool {
	switch k {
	case ProblemOwnedFree, ProblemLeaked, ProblemBitmapBeyond, ProblemOrphanOmap, ProblemOrphanUnits, ProblemPoolStats:
		return true
	}
	return false
}

// FsckProblem is one inconsistency. Fields that do not apply to its kind
// are zero: Collection and Object name the object concerned, Offset is a
// logical offset within it, DevOffset and Length a device range, Key the
// raw Pebble key (hex) of a key-level problem.
type FsckProblem struct {
	Kind       ProblemKind `json:"kind"`
	Collection string      `json:"collection,omitempty"`
	Object     string      `json:"object,omitempty"`
	Offset     uint64      `json:"offset,omitempty"`
	DevOffset  uint64      `json:"device_offset,omitempty"`
	Length     uint64      `json:"length,omitempty"`
	Key        string      `json:"key,omitempty"`
	Detail     string      `json:"detail"`
	Repaired   bool        `json:"repaired,omitempty"`
}

func (p FsckProblem) String() string {
	var b strings.Builder
	b.WriteString(string(p.Kind))
	if p.Collection != "" {
		fmt.Fprintf(&b, " %s", p.Collection)
	}
	if p.Object != "" {
		fmt.Fprintf(&b, " %s", p.Object)
	}
	if p.Object != "" && p.Length != 0 {
		fmt.Fprintf(&b, " offset %d", p.Offset)
	}
	if p.Length != 0 {
		fmt.Fprintf(&b, " device %d+%d", p.DevOffset, p.Length)
	}
	if p.Key != "" {
		fmt.Fprintf(&b, " key %s", p.Key)
	}
	fmt.Fprintf(&b, ": %s", p.Detail)
	if p.Repaired {
		b.WriteString(" (repaired)")
	}
	return b.String()
}

// MaxFsckProblems bounds FsckReport.Problems; further problems are only
// counted (FsckReport.Counts, Omitted).
const MaxFsckProblems = 1000

// FsckReport is what Fsck found (and, with Repair, did).
type FsckReport struct {
	Path          string `json:"path"`
	Size          uint64 `json:"size"`
	AllocUnit     uint64 `json:"alloc_unit"`
	ChecksumBlock uint64 `json:"checksum_block"`
	Deep          bool   `json:"deep"`
	Repair        bool   `json:"repair"`

	Collections     int    `json:"collections"`
	Objects         uint64 `json:"objects"`
	Extents         uint64 `json:"extents"`      // device extents of the records (runs of adjacent units)
	OmapEntries     uint64 `json:"omap_entries"` // omap entries, orphans included
	BytesUsed       uint64 `json:"bytes_used"`   // units the bitmap marks used, before any repair
	BytesFree       uint64 `json:"bytes_free"`   // units the bitmap marks free, before any repair
	BytesOwned      uint64 `json:"bytes_owned"`  // units the records map
	BytesStored     uint64 `json:"bytes_stored"` // logical allocated bytes of the records
	PendingDeferred int    `json:"pending_deferred_writes"`
	BlocksVerified  uint64 `json:"blocks_verified"` // checksum blocks read and verified (Deep)

	// Found counts every problem, Repaired those Repair fixed; Counts
	// breaks Found down by kind.
	Found    int                 `json:"found"`
	Repaired int                 `json:"repaired"`
	Counts   map[ProblemKind]int `json:"counts,omitempty"`
	// Problems lists the first MaxFsckProblems problems; Omitted says
	// how many more were found.
	Problems []FsckProblem `json:"problems"`
	Omitted  int           `json:"omitted,omitempty"`
	// RepairSkipped says why Repair left repairable problems alone.
	RepairSkipped string `json:"repair_skipped,omitempty"`
}

// Clean reports whether every problem found has been repaired (true for a
// store with no problems).
func (r *FsckReport) Clean() bool { return r.Found == r.Repaired }

// Fsck checks the closed store opts describes (Path, FS, DevicePath; the
// geometry comes from the superblock) and, with fo.Repair, repairs it;
// see the comment above for what is checked and repaired. Problems found
// are in the report; the error is for a check that could not run (no
// store, an unreadable superblock, Pebble failing, the store in use, ctx
// done).
func Fsck(ctx context.Context, opts Options, fo FsckOptions) (FsckReport, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return FsckReport{}, err
	}
	if _, err := opts.FS.Stat(opts.dbPath()); err != nil {
		return FsckReport{}, fmt.Errorf("%w: blockstore fsck %s: no store (run Mkfs): %w", ErrBadSuperblock, opts.Path, err)
	}
	po := pebbleOptions(opts)
	po.ErrorIfNotExists = true
	po.ReadOnly = !fo.Repair
	db, err := openPebble(opts.dbPath(), po)
	if err != nil {
		return FsckReport{}, fmt.Errorf("blockstore fsck %s: pebble: %w", opts.Path, err)
	}
	defer db.Close()
	v, closer, err := db.Get([]byte{format.PrefixSuper})
	if err != nil {
		return FsckReport{}, fmt.Errorf("%w: blockstore fsck %s: read superblock: %w", ErrBadSuperblock, opts.Path, err)
	}
	sb, err := format.DecodeSuperblock(v)
	_ = closer.Close()
	if err != nil {
		return FsckReport{}, fmt.Errorf("blockstore fsck %s: %w", opts.Path, err)
	}
	f := &fsck{
		ctx:    ctx,
		db:     db,
		fs:     opts.FS,
		dbPath: opts.dbPath(),
		sb:     sb,
		fo:     fo,
		table:  crc32.MakeTable(crc32.Castagnoli),
		rep: FsckReport{
			Path: opts.Path, Size: sb.Size, AllocUnit: sb.AllocUnit, ChecksumBlock: sb.ChecksumBlock,
			Deep: fo.Deep, Repair: fo.Repair, Counts: make(map[ProblemKind]int), Problems: []FsckProblem{},
		},
		colls:      make(map[objectstore.CollectionID]bool),
		nids:       make(map[uint64]string),
		unitsUnder: make(map[uint64]byte),
		stored:     make(map[int64]uint64),
		overlay:    make(map[uint64][]byte),
		conflicts:  make(map[uint64][]string),
	}
	if fo.Deep {
		if f.file, err = opts.FS.Open(opts.devicePath()); err != nil {
			return FsckReport{}, fmt.Errorf("blockstore fsck %s: open data file: %w", opts.Path, err)
		}
		defer f.file.Close()
	}
	if err := f.run(); err != nil {
		return FsckReport{}, fmt.Errorf("blockstore fsck %s: %w", opts.Path, err)
	}
	if fo.Repair {
		if err := f.repair(); err != nil {
			return f.rep, fmt.Errorf("blockstore fsck %s: repair: %w", opts.Path, err)
		}
	}
	return f.rep, nil
}

// fsck is the state of one check.
type fsck struct {
	ctx    context.Context
	db     *pebble.DB
	fs     vfs.FS // the store's, for its WAL files
	dbPath string
	file   vfs.File
	sb     format.Superblock
	fo     FsckOptions
	table  *crc32.Table
	rep    FsckReport

	colls   map[objectstore.CollectionID]bool
	nextNid uint64 // 0: unknown
	nids    map[uint64]string
	// unitsUnder says where the record of a node id keeps its units:
	// under prefixShard or prefixUnit keys, or 0 (inline).
	unitsUnder map[uint64]byte
	stored     map[int64]uint64 // stored bytes per statsPool, from the records

	bitmap        []uint64          // persisted bitmap, as decoded
	regions       map[uint64][]byte // raw value of each bitmap region key present
	owned         []uint64          // units the records map
	conflicts     map[uint64][]string
	overlay       map[uint64][]byte // pending deferred writes by checksum block
	badRecords    int               // object keys or records that did not decode
	orphanNids    []uint64          // node ids with omap entries but no object
	orphanUnits   []uint64          // node ids with unit keys no object reads
	orphanShards  []uint64          // node ids with shard keys no object reads
	storedCounter map[int64]uint64  // 'P' keys as found
}

func (f *fsck) add(p FsckProblem) {
	f.rep.Found++
	f.rep.Counts[p.Kind]++
	if len(f.rep.Problems) < MaxFsckProblems {
		f.rep.Problems = append(f.rep.Problems, p)
	} else {
		f.rep.Omitted++
	}
}

func (f *fsck) iter(prefix byte) (*pebble.Iterator, error) {
	return f.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
}

func (f *fsck) run() error {
	units := f.sb.Units()
	words := (units + 63) / 64
	f.bitmap = make([]uint64, words)
	f.owned = make([]uint64, words)
	for _, step := range []func() error{
		f.checkKeys, f.checkNextNid, f.checkCollections, f.checkBitmap, f.checkDeferred,
		f.checkObjects, f.checkOmap, f.checkUnitKeys, f.checkPoolStats,
	} {
		if err := f.ctx.Err(); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
	}
	f.compareBitmap()
	return nil
}

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
		for _, u := range rec.Units {
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
			if _, ok := rec.Find(lu); !ok {
				prob(ProblemPageUnmapped, lu*au, 0, au, "allocated pages %d-%d lie in unmapped unit %d", x.Off, x.End, lu)
				break
			}
		}
	}
	stored := rec.AllocatedBytes()
	f.stored[statsPool(c)] += stored
	f.rep.BytesStored += stored
	for i, u := range rec.Units {
		if i == 0 || u.LU != rec.Units[i-1].LU+1 || u.Dev != rec.Units[i-1].Dev+au {
			f.rep.Extents++
		}
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
// written: holdsData).
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

// repair writes the fixes in one synced batch.
func (f *fsck) repair() error {
	safe := f.badRecords == 0
	if !safe {
		f.rep.RepairSkipped = fmt.Sprintf("%d object records do not decode, so the space and node ids they name are unknown: "+
			"no space freed, no omap entries deleted, no counters rewritten", f.badRecords)
	}
	b := f.db.NewBatch()
	defer b.Close()
	// Bitmap: exactly the owned units when every record decoded, else
	// the persisted bitmap plus the owned units.
	const wordsPerRegion = format.BitmapRegionUnits / 64
	target := slices.Clone(f.owned)
	if !safe {
		for i := range target {
			target[i] |= f.bitmap[i]
		}
	}
	nRegions := (uint64(len(target)) + wordsPerRegion - 1) / wordsPerRegion
	for r := uint64(0); r < nRegions; r++ {
		words := target[r*wordsPerRegion : min((r+1)*wordsPerRegion, uint64(len(target)))]
		v := format.EncodeBitmap(words)
		old, present := f.regions[r]
		if present && bytes.Equal(old, v) {
			continue
		}
		if !present && !slices.ContainsFunc(words, func(w uint64) bool { return w != 0 }) {
			continue
		}
		if !safe && present {
			if _, err := format.DecodeBitmap(old); err != nil {
				continue // unknown contents: leave it
			}
		}
		_ = b.Set(format.BitmapKey(r), v, nil)
	}
	fixed := map[ProblemKind]bool{ProblemOwnedFree: true}
	if safe {
		for r := range f.regions {
			if r >= nRegions {
				_ = b.Delete(format.BitmapKey(r), nil)
			}
		}
		for _, nid := range f.orphanNids {
			p := format.OmapPrefix(nid)
			_ = b.DeleteRange(p, format.PrefixEnd(p), nil)
		}
		for _, nid := range f.orphanUnits {
			lo, hi := format.UnitRange(nid)
			_ = b.DeleteRange(lo, hi, nil)
		}
		for _, nid := range f.orphanShards {
			lo, hi := format.ShardRange(nid)
			_ = b.DeleteRange(lo, hi, nil)
		}
		for p, want := range f.stored {
			if f.storedCounter[p] != want {
				_ = b.Set(format.PoolStatsKey(p), format.EncodeUvarint(want), nil)
			}
		}
		for p, got := range f.storedCounter {
			if _, ok := f.stored[p]; !ok && got != 0 {
				_ = b.Set(format.PoolStatsKey(p), format.EncodeUvarint(0), nil)
			}
		}
		fixed[ProblemLeaked] = true
		fixed[ProblemBitmapBeyond] = true
		fixed[ProblemOrphanOmap] = true
		fixed[ProblemOrphanUnits] = true
		fixed[ProblemPoolStats] = true
	}
	if b.Empty() {
		return nil
	}
	if err := f.db.Apply(b, pebble.Sync); err != nil {
		return err
	}
	for k := range fixed {
		f.rep.Repaired += f.rep.Counts[k]
	}
	for i := range f.rep.Problems {
		if fixed[f.rep.Problems[i].Kind] {
			f.rep.Problems[i].Repaired = true
		}
	}
	return nil
}

// ObjectLayout is the debugging view of an object record: how its logical
// bytes map to the device.
type ObjectLayout struct {
	Nid           uint64         `json:"nid"`
	Size          uint64         `json:"size"`
	ChecksumBlock uint64         `json:"checksum_block"`
	Extents       []LayoutExtent `json:"extents"`
	// Pages are the logically allocated ranges (what ExtentMap reports,
	// before clipping to Size).
	Pages []LayoutPages `json:"pages"`
}

// LayoutPages is a run of allocated pages of an object's logical bytes.
type LayoutPages struct {
	Offset uint64 `json:"offset"`
	Length uint64 `json:"length"`
}

// LayoutExtent is a run of the object's logical bytes stored contiguously
// on the device, with one crc32c per checksum block.
type LayoutExtent struct {
	Offset    uint64   `json:"offset"`
	Length    uint64   `json:"length"`
	DevOffset uint64   `json:"device_offset"`
	Checksums []uint32 `json:"checksums"`
}

// Layout returns o's record as applied: node id, size, device extents
// with their checksums, and allocated pages.
func (s *Store) Layout(ctx context.Context, c objectstore.CollectionID, o objid.ID) (ObjectLayout, error) {
	if err := s.begin(ctx); err != nil {
		return ObjectLayout{}, err
	}
	defer s.applyMu.RUnlock()
	rec, err := s.record(c, o)
	if err != nil {
		return ObjectLayout{}, err
	}
	au := s.sb.AllocUnit
	l := ObjectLayout{Nid: rec.Nid, Size: rec.Size, ChecksumBlock: s.sb.ChecksumBlock, Extents: []LayoutExtent{}, Pages: []LayoutPages{}}
	for i, u := range rec.Units {
		if n := len(l.Extents); n > 0 && i > 0 && u.LU == rec.Units[i-1].LU+1 && u.Dev == rec.Units[i-1].Dev+au {
			e := &l.Extents[n-1]
			e.Length += au
			e.Checksums = u.AppendSums(e.Checksums)
			continue
		}
		l.Extents = append(l.Extents, LayoutExtent{Offset: u.LU * au, Length: au, DevOffset: u.Dev, Checksums: u.AppendSums(nil)})
	}
	for _, x := range rec.Pages {
		l.Pages = append(l.Pages, LayoutPages{Offset: x.Off, Length: x.End - x.Off})
	}
	return l, nil
}
