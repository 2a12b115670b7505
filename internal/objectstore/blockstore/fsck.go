package blockstore

import (
	"context"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
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
	// under format.PrefixShard or format.PrefixUnit keys, or 0 (inline).
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
