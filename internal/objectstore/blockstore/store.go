package blockstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"log/slog"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/crc32c"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/alloc"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/format"
	"github.com/cuttlestore/cuttle/internal/pebblelog"
)

// ErrBadSuperblock is wrapped when the superblock is missing or does not
// fit the options.
var ErrBadSuperblock = errors.New("blockstore: bad superblock")

// Store is the block engine. Create one with Mkfs, then Open it.
type Store struct {
	opts Options
	log  *slog.Logger
	sb   format.Superblock
	db   *pebble.DB
	// dev is the data file and its direct and asynchronous I/O
	// (datafile.go).
	dev *dataFile
	// pipe is the commit pipeline (commit.go): Queue hands it prepared
	// transactions, and it hands applied state back (applied.go).
	pipe  *pipeline
	table *crc32.Table
	// zeroSum is the checksum of a block of zeros: that of every block
	// of a unit that no write has touched (newUnit).
	zeroSum uint32
	// blockCRC folds block checksums into the checksum of a read's
	// result (ReadCRC).
	blockCRC *crc32c.Joiner
	cache    *recordCache

	// The key filter (keyfilter.go, filterbuild.go): nil until the
	// first build after Open; then lookups of records it rules out skip
	// Pebble.
	filter         atomic.Pointer[keyFilter]
	keySeed        maphash.Seed
	filterNext     *keyFilter     // being built: new records go into both (prepMu)
	filterBuilding bool           // a build is running (prepMu)
	filterFailed   bool           // a build failed: no more (prepMu)
	filterBuilds   sync.WaitGroup // the running build, which Close waits for

	// prepMu guards the prepare state: everything Queue reads and changes
	// while validating and planning a transaction, and the committer's
	// hand-back of applied state (overlay cleanup, releases:
	// applied.go).
	prepMu    sync.Mutex
	alloc     *alloc.Allocator
	overlay   map[string]overlayRecord          // object key -> record changed by a queued, unapplied txn
	collsPrep map[objectstore.CollectionID]bool // collections in prepare order
	bitmap    []uint64                          // allocation bitmap in prepare order
	nextNid   uint64
	nidLimit  uint64 // the persisted node-id counter: nids below it need no write
	nextSeq   uint64
	poolPrep  map[int64]uint64 // stored bytes per pool in prepare order
	prepEnc   encoding.Encoder // scratch for values the batch copies
	lastComp  *objectstore.Completion
	closed    bool

	// data holds checksum blocks not yet on the data file (copy-on-write
	// data of queued transactions, deferred writes not yet applied).
	data dataOverlay

	// applyMu orders readers against the committer's apply step: readers
	// hold it shared while they fetch a record and read its data, the
	// committer holds it exclusively while it makes a group visible.
	applyMu    sync.RWMutex
	appliedSeq uint64
	poolStored map[int64]uint64
	colls      map[objectstore.CollectionID]bool // collections as applied
	readClosed bool

	statRecordLoads  atomic.Uint64 // record lookups that went to Pebble
	readBufs         readBufPool   // large read buffers handed back by Recycle
	statFilterSkips  atomic.Uint64 // record lookups the key filter answered
	statFilterBuilds atomic.Uint64 // key filters built
}

// Mkfs creates an empty store at opts.Path: the data file and a Pebble
// database holding the superblock. It fails with ErrExists if a store
// is there already.
func Mkfs(opts Options) error {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return err
	}
	sb := format.Superblock{Size: opts.Size, AllocUnit: opts.AllocUnit, ChecksumBlock: opts.ChecksumBlock}
	if err := sb.Validate(); err != nil {
		return fmt.Errorf("%w: blockstore mkfs: %w", objectstore.ErrInvalid, err)
	}
	fs := opts.FS
	if err := fs.MkdirAll(opts.Path, 0o755); err != nil {
		return fmt.Errorf("blockstore mkfs %s: %w", opts.Path, err)
	}
	if err := syncDir(fs, fs.PathDir(opts.Path)); err != nil {
		return fmt.Errorf("blockstore mkfs: %w", err)
	}
	if _, err := fs.Stat(opts.dbPath()); err == nil {
		return fmt.Errorf("%w: blockstore mkfs: %s holds a store", objectstore.ErrExists, opts.Path)
	}
	if opts.DevicePath == "" {
		f, err := fs.Create(opts.devicePath(), vfs.WriteCategoryUnspecified)
		if err != nil {
			return fmt.Errorf("blockstore mkfs: create data file: %w", err)
		}
		err = f.Preallocate(0, int64(sb.Size))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("blockstore mkfs: data file: %w", err)
		}
		if err := syncDir(fs, opts.Path); err != nil {
			return fmt.Errorf("blockstore mkfs: %w", err)
		}
	}
	db, err := openPebble(opts.dbPath(), pebbleOptions(opts))
	if err != nil {
		return fmt.Errorf("blockstore mkfs: open pebble: %w", err)
	}
	b := db.NewBatch()
	_ = b.Set([]byte{format.PrefixSuper}, sb.Encode(), nil)
	_ = b.Set([]byte{format.PrefixNextNid}, format.EncodeUvarint(1), nil)
	err = db.Apply(b, pebble.Sync)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("blockstore mkfs: write superblock: %w", err)
	}
	if err := syncDir(fs, opts.Path); err != nil {
		return fmt.Errorf("blockstore mkfs: %w", err)
	}
	opts.Logger.Info("blockstore: mkfs", "path", opts.Path, "size", sb.Size, "alloc_unit", sb.AllocUnit, "checksum_block", sb.ChecksumBlock)
	return nil
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// pebbleOptions returns the options every opening of the store's Pebble
// uses. Its file system keeps every WAL file Pebble gives up (walKeeper
// in recovery): the deferred data in them is for Open to replay, so a
// check or a tool that opens the database must not remove them. Open
// replaces it with one that lets them go once replayed.
func pebbleOptions(opts Options) *pebble.Options {
	b := opts.budget()
	o := &pebble.Options{
		FS:                          walWatch{FS: opts.FS, health: &walHealth{}, keeper: newWALKeeper(opts.FS, opts.Logger)},
		Logger:                      pebblelog.Logger{Log: opts.Logger.WithGroup("pebble"), Prefix: "blockstore"},
		Cache:                       pebble.NewCache(b.blockCache),
		MemTableSize:                spreadMemTable(b.memTable, rand.Float64()),
		MemTableStopWritesThreshold: memTables,
	}
	if opts.Background != nil {
		o.EventListener = backgroundListener(opts.Background)
	}
	// Bloom filters on every level (later levels take L0's): a new
	// object's first write looks its record up, and without filters a
	// lookup of a key that is nowhere searched the index of every table
	// it could be in (about 30 µs per replicated 4 KiB create in the OSD
	// benchmark's profile). Get still skips L6's filters and opens every
	// L0 table it passes, so the store's own key filter (keyfilter.go)
	// answers most lookups of absent records before Pebble.
	o.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	// Compact L0 later than Pebble's default of 4 sublevels. While the
	// database is small its base level is L6, which every L0 compaction
	// rewrites whole, and deferred data fills a memtable every second or
	// so under 4 KiB writes (most of it deleted before the flush): at
	// the default an OSD rewrote its whole key space about once a
	// second, 37% of its CPU once it held 76,000 objects. At 16, 60 s of
	// replicated 4 KiB creates compacted 59 MB instead of 195 MB, in 2.1
	// s instead of 6.9 s, and went 10-15% faster (docs/benchmarks/
	// 2026-11-24.md, "Pebble compactions"). Lookups probe more L0 tables,
	// each behind a Bloom filter; writes stop only at 64 sublevels.
	o.L0CompactionThreshold = l0CompactionThreshold
	o.L0StopWritesThreshold = l0StopWritesThreshold
	return o
}

// openPebble opens the metadata database with o and drops the
// reference to the block cache that pebbleOptions made (the database
// holds its own).
func openPebble(path string, o *pebble.Options) (*pebble.DB, error) {
	defer o.Cache.Unref()
	return pebble.Open(path, o)
}

// Open opens a store made by Mkfs, replays deferred writes left by a
// crash, and starts the committer.
func Open(opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if _, err := opts.FS.Stat(opts.dbPath()); err != nil {
		return nil, fmt.Errorf("%w: blockstore open %s: no store (run Mkfs): %w", ErrBadSuperblock, opts.Path, err)
	}
	po := pebbleOptions(opts)
	po.ErrorIfNotExists = true
	wal := &walHealth{}
	var walSyncer *dio.AIO
	if opts.FS == vfs.Default {
		walSyncer = dio.NewSyncAIO()
	}
	log := opts.Logger.With("store", opts.Path)
	wals := newWALKeeper(opts.FS, log)
	po.FS = walWatch{FS: opts.FS, health: wal, syncer: walSyncer, keeper: wals}
	db, err := openPebble(opts.dbPath(), po)
	if err != nil {
		if walSyncer != nil {
			walSyncer.Close()
		}
		return nil, fmt.Errorf("blockstore open %s: pebble: %w", opts.Path, err)
	}
	s := &Store{
		opts:       opts,
		log:        log,
		db:         db,
		dev:        &dataFile{aioSync: walSyncer, directReads: opts.DirectReads},
		table:      crc32.MakeTable(crc32.Castagnoli),
		overlay:    make(map[string]overlayRecord),
		collsPrep:  make(map[objectstore.CollectionID]bool),
		colls:      make(map[objectstore.CollectionID]bool),
		poolPrep:   make(map[int64]uint64),
		poolStored: make(map[int64]uint64),
		keySeed:    maphash.MakeSeed(),
	}
	s.cache = newRecordCache(opts.budget().records, func(b []byte) (*format.Onode, error) { return format.DecodeRecord(b, s.sb) })
	s.data.init()
	s.pipe = newPipeline(&pipeline{
		log: log, db: db, wal: wal, dev: s.dev, data: &s.data, wals: wals, host: s,
		skipDeferredApply: opts.testSkipDeferredApply, loggedPerWAL: opts.testLoggedPerWAL,
	})
	if err := s.load(); err != nil {
		_ = db.Close()
		_ = s.dev.close()
		return nil, fmt.Errorf("blockstore open %s: %w", opts.Path, err)
	}
	s.pipe.checksumBlock = s.sb.ChecksumBlock
	wals.endRecovery()
	s.pipe.start()
	s.prepMu.Lock()
	s.startFilterBuildLocked()
	s.prepMu.Unlock()
	return s, nil
}

// load reads the superblock, opens the data file, replays deferred
// writes and rebuilds the allocator from the persisted bitmap.
func (s *Store) load() error {
	v, closer, err := s.db.Get([]byte{format.PrefixSuper})
	if err != nil {
		return fmt.Errorf("%w: read superblock: %w", ErrBadSuperblock, err)
	}
	s.sb, err = format.DecodeSuperblock(v)
	_ = closer.Close()
	if err != nil {
		return err
	}
	s.dev.size, s.dev.checksumBlock = s.sb.Size, s.sb.ChecksumBlock
	s.dev.cache = newDataCache(s.opts.DataCacheBytes, s.sb.ChecksumBlock)
	s.zeroSum = crc32.Checksum(make([]byte, s.sb.ChecksumBlock), s.table)
	s.blockCRC = crc32c.NewJoiner(s.sb.ChecksumBlock)
	if s.nextNid, err = s.getUvarint([]byte{format.PrefixNextNid}); err != nil {
		return fmt.Errorf("next node id: %w", err)
	}
	s.nidLimit = s.nextNid
	// OpenReadWrite would create a missing data file: check it is there
	// and (below, after the replay) that it reaches into the last
	// allocated unit, so that a lost or truncated data file fails Open
	// instead of reading as zeros. (A unit's blocks that no write
	// touched are never written, so the file may end inside the last
	// unit; a truncation there fails the checksums of what it cut.)
	path := s.opts.devicePath()
	if _, err := s.opts.FS.Stat(path); err != nil {
		return fmt.Errorf("data file %s: %w", path, err)
	}
	if err := s.loadBitmap(); err != nil {
		return err
	}
	if err := s.dev.open(s.opts.FS, path); err != nil {
		return err
	}
	if err := s.replayDeferred(); err != nil {
		return err
	}
	// After the replay: the last units may hold only deferred writes.
	fi, err := s.opts.FS.Stat(path)
	if err != nil {
		return fmt.Errorf("data file %s: %w", path, err)
	}
	if end := s.usedEnd(); fi.Mode().IsRegular() && end > 0 && uint64(fi.Size()) <= end-s.sb.AllocUnit {
		return fmt.Errorf("%w: data file %s holds %d bytes, but allocated units reach %d (truncated or replaced?)", objectstore.ErrCorrupt, path, fi.Size(), end)
	}
	if err := s.loadPoolStats(); err != nil {
		return err
	}
	if err := s.loadCollections(); err != nil {
		return err
	}
	s.log.Info("blockstore: open", "size", s.sb.Size, "free", s.alloc.Free())
	return nil
}

func (s *Store) getUvarint(key []byte) (uint64, error) {
	v, closer, err := s.db.Get(key)
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	return format.DecodeUvarint(v)
}

func (s *Store) loadBitmap() error {
	a, err := alloc.New(s.sb.Size, s.sb.AllocUnit)
	if err != nil {
		return fmt.Errorf("allocator: %w", err)
	}
	s.alloc = a
	units := s.sb.Units()
	s.bitmap = make([]uint64, (units+63)/64)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{format.PrefixBitmap}, UpperBound: []byte{format.PrefixBitmap + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	const wordsPerRegion = format.BitmapRegionUnits / 64
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != 9 {
			return fmt.Errorf("%w: bitmap key %x", objectstore.ErrCorrupt, k)
		}
		r := beUint64(k[1:])
		words, err := format.DecodeBitmap(it.Value())
		if err != nil {
			return err
		}
		if r > uint64(len(s.bitmap))/wordsPerRegion || r*wordsPerRegion+uint64(len(words)) > uint64(len(s.bitmap)) {
			return fmt.Errorf("%w: bitmap region %d beyond the device", objectstore.ErrCorrupt, r)
		}
		copy(s.bitmap[r*wordsPerRegion:], words)
	}
	if err := it.Error(); err != nil {
		return err
	}
	// Mark runs of used units.
	var runStart, runLen uint64
	flush := func() error {
		if runLen == 0 {
			return nil
		}
		err := s.alloc.MarkUsed(alloc.Extent{Offset: runStart * s.sb.AllocUnit, Length: runLen * s.sb.AllocUnit})
		runLen = 0
		return err
	}
	for u := uint64(0); u < units; u++ {
		if s.bitmap[u/64]&(1<<(u%64)) == 0 {
			if err := flush(); err != nil {
				return fmt.Errorf("%w: bitmap: %w", objectstore.ErrCorrupt, err)
			}
			continue
		}
		if runLen == 0 {
			runStart = u
		}
		runLen++
	}
	if err := flush(); err != nil {
		return fmt.Errorf("%w: bitmap: %w", objectstore.ErrCorrupt, err)
	}
	for i := units; i < uint64(len(s.bitmap))*64; i++ {
		if s.bitmap[i/64]&(1<<(i%64)) != 0 {
			return fmt.Errorf("%w: bitmap marks unit %d beyond the device", objectstore.ErrCorrupt, i)
		}
	}
	return nil
}

func (s *Store) loadPoolStats() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{format.PrefixPoolStats}, UpperBound: []byte{format.PrefixPoolStats + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != 9 {
			return fmt.Errorf("%w: pool stats key %x", objectstore.ErrCorrupt, k)
		}
		v, err := format.DecodeUvarint(it.Value())
		if err != nil {
			return fmt.Errorf("pool stats: %w", err)
		}
		pool := int64(beUint64(k[1:]) ^ (1 << 63))
		s.poolPrep[pool] = v
		s.poolStored[pool] = v
	}
	return it.Error()
}

// setBits marks units of ext used (or free) in the prepare bitmap and
// appends the regions it touches to dirty (in order, perhaps repeated).
func (s *Store) setBits(ext alloc.Extent, used bool, dirty []uint64) []uint64 {
	first := ext.Offset / s.sb.AllocUnit
	for u := first; u < first+ext.Length/s.sb.AllocUnit; u++ {
		if used {
			s.bitmap[u/64] |= 1 << (u % 64)
		} else {
			s.bitmap[u/64] &^= 1 << (u % 64)
		}
		if r := u / format.BitmapRegionUnits; len(dirty) == 0 || dirty[len(dirty)-1] != r {
			dirty = append(dirty, r)
		}
	}
	return dirty
}

// regionValue encodes bitmap region r as it stands in prepare order,
// into s.prepEnc: valid until its next use.
func (s *Store) regionValue(r uint64) []byte {
	const w = format.BitmapRegionUnits / 64
	end := min((r+1)*w, uint64(len(s.bitmap)))
	s.prepEnc.Reset()
	return format.EncodeBitmapTo(&s.prepEnc, s.bitmap[r*w:end])
}

// usedEnd is the device offset just past the last unit the bitmap marks
// used (0 if none).
func (s *Store) usedEnd() uint64 {
	for i := len(s.bitmap) - 1; i >= 0; i-- {
		if w := s.bitmap[i]; w != 0 {
			return (uint64(i)*64 + uint64(63-bits.LeadingZeros64(w)) + 1) * s.sb.AllocUnit
		}
	}
	return 0
}

// usedUnits counts the units the bitmap marks used (for checks).
func (s *Store) usedUnits() uint64 {
	var n int
	for _, w := range s.bitmap {
		n += bits.OnesCount64(w)
	}
	return uint64(n)
}

// Close waits for queued transactions to commit, applies outstanding
// deferred writes and closes the files. Later calls return ErrClosed.
func (s *Store) Close() error {
	s.prepMu.Lock()
	if s.closed {
		s.prepMu.Unlock()
		return objectstore.ErrClosed
	}
	s.closed = true
	s.prepMu.Unlock()
	s.pipe.close()
	s.applyMu.Lock()
	s.readClosed = true
	s.applyMu.Unlock()
	s.dev.ra.wg.Wait()    // no read is left to start a prefetch
	s.filterBuilds.Wait() // a build stops once the pipeline is done
	var errs []error
	if s.pipe.failure() == nil && !s.opts.testSkipDeferredApply {
		if err := s.pipe.syncDeferred(pebble.Sync); err != nil {
			errs = append(errs, err)
		} else if err := s.pipe.releaseWALs(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close pebble: %w", err))
	}
	if err := s.dev.close(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("blockstore close %s: %w", s.opts.Path, err)
	}
	s.log.Info("blockstore: closed")
	return nil
}

func (s *Store) loadCollections() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{format.PrefixCollection}, UpperBound: []byte{format.PrefixCollection + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		c, err := format.DecodeColl(it.Key()[1:])
		if err != nil {
			return err
		}
		if err := format.DecodeEmpty(it.Value()); err != nil {
			return fmt.Errorf("collection %v: %w", c, err)
		}
		s.colls[c] = true
		s.collsPrep[c] = true
	}
	return it.Error()
}

func beUint64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
