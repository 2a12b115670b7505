package objectstore

import (
	"context"
	"sync"

	"github.com/cuttlestore/cuttle/objid"
)

// MaxObjectSize bounds an object's size (offset plus length of any write),
// as Ceph's osd_max_object_size does.
const MaxObjectSize = 1 << 40

// Store is a local object store. All methods are safe for concurrent use.
type Store interface {
	// Queue validates t and starts applying it. Validation errors (a
	// missing object or collection, a bad range) return at once and
	// nothing is applied. Otherwise the returned Completion reports when t
	// is visible to readers and when it is durable.
	Queue(ctx context.Context, t *Transaction) (*Completion, error)

	// Read returns length bytes at off (fewer at the end of the object;
	// holes read as zeros). length 0 reads to the end. The slice is the
	// caller's: the store keeps no reference to it, so later writes do
	// not change it (an OSD sends read data from it without a copy).
	Read(ctx context.Context, c CollectionID, o objid.ID, off, length uint64) ([]byte, error)
	// Stat returns o's size and allocation.
	Stat(ctx context.Context, c CollectionID, o objid.ID) (ObjectInfo, error)
	// ExtentMap returns the allocated (non-hole) ranges of o within
	// [off, off+length), in order; length 0 means to the end.
	ExtentMap(ctx context.Context, c CollectionID, o objid.ID, off, length uint64) ([]Extent, error)

	// GetAttr returns one attribute (ErrNoAttr if absent).
	GetAttr(ctx context.Context, c CollectionID, o objid.ID, name string) ([]byte, error)
	// GetAttrs returns every attribute.
	GetAttrs(ctx context.Context, c CollectionID, o objid.ID) (map[string][]byte, error)

	// OmapGetHeader returns the omap header (nil if unset).
	OmapGetHeader(ctx context.Context, c CollectionID, o objid.ID) ([]byte, error)
	// OmapGetValues returns the entries for the keys that exist.
	OmapGetValues(ctx context.Context, c CollectionID, o objid.ID, keys []string) (map[string][]byte, error)
	// OmapIterate returns, in key order, up to limit entries whose keys
	// are > after (all keys when after is "") and start with prefix;
	// more reports whether further entries match.
	OmapIterate(ctx context.Context, c CollectionID, o objid.ID, after, prefix string, limit int) (entries []KV, more bool, err error)

	// ListCollections returns every collection.
	ListCollections(ctx context.Context) ([]CollectionID, error)
	// CollectionExists reports whether c exists.
	CollectionExists(ctx context.Context, c CollectionID) (bool, error)
	// ListObjects returns up to limit objects of c in hash order
	// (objid.Compare) that sort at or after start, and the cursor to
	// continue from (objid.Max() when the listing is complete). Use the
	// zero objid.ID to start from the beginning.
	ListObjects(ctx context.Context, c CollectionID, start objid.ID, limit int) (objs []objid.ID, next objid.ID, err error)

	// StatFS reports space usage.
	StatFS(ctx context.Context) (FSStats, error)

	// Close waits for queued transactions to commit and releases the
	// store. Later calls return ErrClosed.
	Close() error
}

// DeviceReader is implemented by stores that may answer reads from a
// cache (such as the kernel's page cache). ReadDevice reads like Read but
// checks the data the device holds, never a cached copy: a deep scrub
// must find what the disk has lost even while a good copy is cached.
type DeviceReader interface {
	ReadDevice(ctx context.Context, c CollectionID, o objid.ID, off, length uint64) ([]byte, error)
}

// AttrStater is implemented by stores that can stat an object and copy
// up to two of its attributes in one lookup of its metadata (an OSD's
// write reads the object's size, its info and, in a pool that has had a
// snapshot, its snap set). StatAttrs returns what Stat returns, with
// the same errors, and the attributes named in names (an empty name
// asks for none).
type AttrStater interface {
	StatAttrs(ctx context.Context, c CollectionID, o objid.ID, names [2]string) (StatAttrs, error)
}

// StatAttrs is what AttrStater.StatAttrs returns: Vals[i] is a copy of
// attribute names[i] if Has[i] (not nil then, if empty).
type StatAttrs struct {
	Info ObjectInfo
	Vals [2][]byte
	Has  [2]bool
}

// CRCReader is implemented by stores that verify checksums on reads.
// ReadCRC reads like Read and also returns the crc32c (Castagnoli) of the
// bytes it returns, derived from the checksums it verified, so that a
// caller sending the data on (the OSD's messenger) need not hash it again.
type CRCReader interface {
	ReadCRC(ctx context.Context, c CollectionID, o objid.ID, off, length uint64) ([]byte, uint32, error)
}

// KVReporter is implemented by stores that keep their metadata in a
// log-structured key-value database. KVStats reports that database's
// state for operators (`cuttle tell osd.N dump_objectstore_kv_stats`):
// how much it logs, flushes and compacts tells where a store's metadata
// work goes.
type KVReporter interface {
	KVStats(ctx context.Context) (KVStats, error)
}

// KVStats is the state of a store's metadata database. Byte and event
// counts run from when the store was opened.
type KVStats struct {
	Levels                []KVLevel `json:"levels"` // level 0 (newest data) first
	WALFiles              int64     `json:"wal_files"`
	WALFilesHeld          int       `json:"wal_files_held"`    // given up by the database, kept for data not yet applied
	WALBytesIn            uint64    `json:"wal_bytes_in"`      // logical bytes logged
	WALBytesWritten       uint64    `json:"wal_bytes_written"` // bytes written to log files
	MemTables             int64     `json:"memtables"`
	MemTableBytes         uint64    `json:"memtable_bytes"`
	Flushes               int64     `json:"flushes"`
	Compactions           int64     `json:"compactions"`
	CompactionsInProgress int64     `json:"compactions_in_progress"`
	CompactionDebtBytes   uint64    `json:"compaction_debt_bytes"` // estimated bytes to compact for a stable shape
	Tombstones            uint64    `json:"tombstones"`            // deletions not yet compacted away
	BlockCacheBytes       int64     `json:"block_cache_bytes"`
	BlockCacheHits        int64     `json:"block_cache_hits"`
	BlockCacheMisses      int64     `json:"block_cache_misses"`
	// Report is the database's own multi-line report, for people.
	Report string `json:"-"`
}

// KVLevel is one level of a log-structured database.
type KVLevel struct {
	Level        int     `json:"level"`
	Sublevels    int32   `json:"sublevels"` // level 0 only: overlapping runs of tables
	Tables       int64   `json:"tables"`
	Bytes        int64   `json:"bytes"`
	Score        float64 `json:"score"`         // compaction priority; above 1 wants compacting
	BytesIn      uint64  `json:"bytes_in"`      // flushed or compacted into the level
	BytesRead    uint64  `json:"bytes_read"`    // read from the level by compactions
	BytesWritten uint64  `json:"bytes_written"` // tables written into the level
}

// Recycler is implemented by stores that reuse read buffers. Recycle
// hands back a slice Read returned, which the caller must not touch
// afterwards; slices the store cannot reuse are left to the collector.
type Recycler interface {
	Recycle(b []byte)
}

// ReadDevice reads from the device where st implements DeviceReader and
// with st.Read otherwise (a store that caches no data).
func ReadDevice(ctx context.Context, st Store, c CollectionID, o objid.ID, off, length uint64) ([]byte, error) {
	if dr, ok := st.(DeviceReader); ok {
		return dr.ReadDevice(ctx, c, o, off, length)
	}
	return st.Read(ctx, c, o, off, length)
}

// ObjectInfo describes an object.
type ObjectInfo struct {
	Size      uint64 // logical size in bytes
	Allocated uint64 // bytes of allocated (non-hole) data
}

// Extent is a range of an object's logical bytes.
type Extent struct {
	Offset, Length uint64
}

// KV is one omap entry.
type KV struct {
	Key   string
	Value []byte
}

// FSStats reports a store's space.
type FSStats struct {
	Total      uint64           // bytes of the device
	Available  uint64           // bytes that can still be allocated
	Allocated  uint64           // bytes allocated to object data
	Stored     uint64           // logical bytes of object data (holes excluded)
	PoolStored map[int64]uint64 // stored bytes by pool
}

// Completion tracks one queued transaction. Applied closes when readers
// see the transaction; Committed closes when it is durable. If the store
// fails to apply or commit it (an I/O error), both close and Err says why;
// a transaction whose Err is non-nil may be partly durable only if the
// store reports it corrupt on the next open.
type Completion struct {
	applied, committed chan struct{}
	mu                 sync.Mutex
	err                error
	isApplied          bool // MarkApplied has run
	done               bool // MarkCommitted has run; err no longer changes
	onApplied          []func()
	onCommitted        []func(error)
}

// NewCompletion returns an open completion; engines create them.
func NewCompletion() *Completion {
	return &Completion{applied: make(chan struct{}), committed: make(chan struct{})}
}

// Applied is closed once readers see the transaction.
func (c *Completion) Applied() <-chan struct{} { return c.applied }

// Committed is closed once the transaction is durable (or failed).
func (c *Completion) Committed() <-chan struct{} { return c.committed }

// Err returns the transaction's failure, if any, once Committed is closed.
func (c *Completion) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// OnApplied runs fn once the transaction is applied: at once, in the
// caller's goroutine, if it is already, else in the engine's goroutine
// that applies it. fn must not block, as it holds up the engine; it
// spares a caller a goroutine parked on Applied per transaction.
func (c *Completion) OnApplied(fn func()) {
	c.mu.Lock()
	if !c.isApplied {
		c.onApplied = append(c.onApplied, fn)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	fn()
}

// OnCommitted runs fn with the transaction's error (nil on success) once
// it is committed or has failed, as OnApplied does: fn must not block.
// Applied and Committed are closed before any callback runs. The engine
// runs the callbacks it holds in the order they came, OnApplied's first;
// one registered after the mark runs at once, in the caller's goroutine,
// perhaps before the engine has finished with earlier ones.
func (c *Completion) OnCommitted(fn func(error)) {
	c.mu.Lock()
	if !c.done {
		c.onCommitted = append(c.onCommitted, fn)
		c.mu.Unlock()
		return
	}
	err := c.err
	c.mu.Unlock()
	fn(err)
}

// MarkApplied closes Applied and runs the OnApplied callbacks; engines
// call it.
func (c *Completion) MarkApplied() {
	c.mu.Lock()
	fns := c.markAppliedLocked()
	c.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// markAppliedLocked closes Applied, if it is open, and returns the
// callbacks to run.
func (c *Completion) markAppliedLocked() []func() {
	if c.isApplied {
		return nil
	}
	c.isApplied = true
	close(c.applied)
	fns := c.onApplied
	c.onApplied = nil
	return fns
}

// MarkCommitted records err (nil on success), closes Applied and
// Committed and runs the callbacks; engines call it. Only the first
// call's err is kept, so Err does not change once Committed is closed.
func (c *Completion) MarkCommitted(err error) {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return
	}
	c.err, c.done = err, true
	applied := c.markAppliedLocked()
	close(c.committed)
	committed := c.onCommitted
	c.onCommitted = nil
	c.mu.Unlock()
	for _, fn := range applied {
		fn()
	}
	for _, fn := range committed {
		fn(err)
	}
}

// WaitApplied blocks until the transaction is applied or ctx is done.
func (c *Completion) WaitApplied(ctx context.Context) error {
	select {
	case <-c.applied:
		select {
		case <-c.committed:
			return c.Err()
		default:
			return nil
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait blocks until the transaction is committed or ctx is done, and
// returns its error.
func (c *Completion) Wait(ctx context.Context) error {
	select {
	case <-c.committed:
		return c.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Apply queues t on s and waits for it to commit.
func Apply(ctx context.Context, s Store, t *Transaction) error {
	c, err := s.Queue(ctx, t)
	if err != nil {
		return err
	}
	return c.Wait(ctx)
}
