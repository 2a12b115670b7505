package s3gw

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/rados"
)

// Bucket check (`cuttle s3 bucket check`, docs/S3.md "Checking
// buckets"): does every index entry's data exist whole, is every data
// object named by something, and does the garbage list name only what
// nothing uses?
//
// A data id names no bucket (its objects are s3.d.ID.N), so which data
// objects are leaked is a question about the whole pool: the leak scan
// lists the pool's data objects first, then reads every upload's parts,
// every bucket index, and the garbage list, in that order. Each write
// moves a data id from the garbage list to a part or an entry, and a
// completion from parts to an entry, adding before removing; reading the
// later holders after the earlier ones means a live id is seen in one of
// them unless its writer stalled between writing the data and committing
// it for longer than MinIdle, which the collector assumes never happens
// either. A data id no holder names whose newest object changed within
// MinIdle is a write in flight and not counted.

// CheckOptions say what CheckBuckets checks and fixes.
type CheckOptions struct {
	// Buckets names the buckets whose entries are checked; All checks
	// every bucket.
	Buckets []string
	All     bool
	// Leaks lists the pool's data objects and counts as leaked those
	// that no bucket's entry, no upload's part and no garbage record
	// names. It reads every bucket's index, whichever are checked.
	Leaks bool
	// MinIdle is how long a data object unnamed by anything must have
	// been left unchanged to count as leaked, and how old a garbage
	// record naming live data must be to count (younger ones are writes
	// in flight). DefaultGarbageAge is the collector's own grace; 0
	// counts everything (only when no gateway is writing).
	MinIdle time.Duration
	// Fix puts leaked data on the garbage list (never removes them: the
	// collector does; their record names no object or upload, so its
	// own check has nothing to look at and the scan above is what makes
	// this safe) and drops garbage records that name live data.
	Fix bool
	// RemoveBroken, with Fix, removes the entries whose data are missing
	// or short (the object can never be read whole), putting what is
	// left of their data on the garbage list.
	RemoveBroken bool
	// Examples bounds the examples kept of each kind (default 10).
	Examples int
	// Progress, when set, is told how far the check has got, every few
	// hundred items.
	Progress func(CheckProgress)
}

// CheckProgress is how far a check has got.
type CheckProgress struct {
	// Phase is "pool" (listing the data objects), "uploads", "index"
	// (of Bucket), "garbage" or "leaks".
	Phase  string
	Bucket string
	// Done counts the items of the phase so far.
	Done int
}

// CheckProblem is one example of a finding.
type CheckProblem struct {
	Bucket  string `json:"bucket,omitempty"`
	Key     string `json:"key,omitempty"`
	Version string `json:"version,omitempty"`
	Upload  string `json:"upload,omitempty"`
	// Data is the data id, 16 hex digits (its objects are s3.d.DATA.N).
	Data   string `json:"data,omitempty"`
	Detail string `json:"detail"`
	Fixed  bool   `json:"fixed"`
}

// Finding counts one kind of problem, with examples.
type Finding struct {
	Count    int            `json:"count"`
	Fixed    int            `json:"fixed"`
	Examples []CheckProblem `json:"examples"`
}

// CheckReport is what CheckBuckets found and did.
type CheckReport struct {
	Buckets []string `json:"buckets"`
	// Entries counts the index keys read in the checked buckets (every
	// version, and delete markers); DataObjects the data objects stat'd
	// for them.
	Entries     int `json:"entries"`
	DataObjects int `json:"data_objects_checked"`
	// Uploads and Parts count the checked buckets' uploads in progress
	// and their parts, whose data are checked too.
	Uploads int `json:"uploads"`
	Parts   int `json:"parts"`
	// LeaksChecked says the pool was scanned for leaks; PoolDataObjects
	// is how many data objects it holds.
	LeaksChecked    bool `json:"leaks_checked"`
	PoolDataObjects int  `json:"pool_data_objects"`
	GarbageRecords  int  `json:"garbage_records"`
	// MinIdle is the grace, in seconds.
	MinIdle float64 `json:"min_idle_seconds"`
	// InFlight counts data ids nothing names but written within MinIdle
	// (not problems: uploads in progress, most likely).
	InFlight int `json:"in_flight"`

	// Missing: entries whose data objects are missing or shorter than
	// their extents (the object reads short or fails).
	Missing Finding `json:"missing_data"`
	// BrokenParts: parts of uploads in progress whose data are missing
	// or short (completing the upload would make a broken object).
	BrokenParts Finding `json:"parts_missing_data"`
	// Leaked: data ids that nothing names, idle for MinIdle.
	Leaked Finding `json:"leaked_data"`
	// LiveGarbage: garbage records older than MinIdle whose data an
	// entry or a part names (a collector that trusted the record would
	// destroy live data).
	LiveGarbage Finding `json:"garbage_naming_live_data"`
	// Undecodable: index keys whose entry does not decode (or whose
	// version id is malformed).
	Undecodable Finding `json:"undecodable_entries"`
	// LeaksKept says why leaked data were not put on the garbage list
	// by a fix: an index entry that does not decode (in any bucket) may
	// be what names them, as one written by a newer Cuttle would.
	LeaksKept string `json:"leaks_kept,omitempty"`
}

// Remaining counts the problems found and not fixed.
func (r CheckReport) Remaining() int {
	n := 0
	for _, f := range []Finding{r.Missing, r.BrokenParts, r.Leaked, r.LiveGarbage, r.Undecodable} {
		n += f.Count - f.Fixed
	}
	return n
}

// checker is one run of CheckBuckets.
type checker struct {
	g    *Gateway
	opts CheckOptions
	rep  CheckReport
	now  time.Time

	names map[string]string // bucket id -> name, of the buckets known
	// refs holds every data id an entry or a part names.
	refs map[uint64]bool
	// pool: data id -> its objects' numbers, from the listing (Leaks).
	pool    map[uint64][]uint64
	indexes []string // bucket ids with an index in the pool (Leaks)
	uploads []string // upload ids with a parts object (Leaks)
	broken  []brokenEntry
	// unreadable counts the index keys that do not decode, in every
	// index read.
	unreadable int
	leaked     []meta.Garbage
	liveRecs   []uint64
}

// brokenEntry is an entry whose data are missing or short.
type brokenEntry struct {
	bucket   meta.Bucket
	name, id string
	entry    meta.Entry
}

// CheckBuckets checks the buckets opts names (and, with opts.Leaks, the
// pool's data objects) and with opts.Fix fixes what it safely can; see
// CheckOptions. The error is for a check that could not run to its end.
func (g *Gateway) CheckBuckets(ctx context.Context, opts CheckOptions) (CheckReport, error) {
	opts.MinIdle = max(opts.MinIdle, 0)
	if opts.Examples <= 0 {
		opts.Examples = 10
	}
	c := &checker{g: g, opts: opts, now: g.now(), names: map[string]string{}, refs: map[uint64]bool{}, pool: map[uint64][]uint64{}}
	c.rep.MinIdle = opts.MinIdle.Seconds()
	c.rep.LeaksChecked = opts.Leaks
	for _, f := range []*Finding{&c.rep.Missing, &c.rep.BrokenParts, &c.rep.Leaked, &c.rep.LiveGarbage, &c.rep.Undecodable} {
		f.Examples = []CheckProblem{}
	}
	buckets, err := c.buckets(ctx)
	if err != nil {
		return c.rep, err
	}
	for _, b := range buckets {
		c.rep.Buckets = append(c.rep.Buckets, b.Name)
		c.names[b.ID] = b.Name
	}
	if opts.Leaks {
		if err := c.listPool(ctx); err != nil {
			return c.rep, err
		}
	}
	// Parts, then entries, then garbage (the order the doc comment
	// above explains).
	if err := c.readParts(ctx, buckets); err != nil {
		return c.rep, err
	}
	for _, b := range buckets {
		if err := c.checkIndex(ctx, b); err != nil {
			return c.rep, err
		}
	}
	if opts.Leaks {
		for _, id := range c.indexes {
			if _, ok := c.names[id]; ok {
				continue // checked above
			}
			if err := c.readIndex(ctx, id); err != nil {
				return c.rep, err
			}
		}
	}
	garbage, err := c.readGarbage(ctx)
	if err != nil {
		return c.rep, err
	}
	if opts.Leaks {
		if err := c.findLeaks(ctx, garbage); err != nil {
			return c.rep, err
		}
	}
	if opts.Fix {
		if err := c.fix(ctx); err != nil {
			return c.rep, err
		}
	}
	return c.rep, nil
}

func (c *checker) progress(phase, bucket string, done int) {
	if c.opts.Progress != nil && done%256 == 0 {
		c.opts.Progress(CheckProgress{Phase: phase, Bucket: bucket, Done: done})
	}
}

// note counts a problem in f and keeps it as an example if there is room.
func (c *checker) note(f *Finding, p CheckProblem) {
	f.Count++
	if len(f.Examples) < c.opts.Examples {
		f.Examples = append(f.Examples, p)
	}
}

// buckets resolves the buckets to check.
func (c *checker) buckets(ctx context.Context) ([]meta.Bucket, error) {
	st := c.g.meta
	if !c.opts.All {
		var out []meta.Bucket
		for _, name := range c.opts.Buckets {
			b, err := st.GetBucket(ctx, name)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		return out, nil
	}
	users, err := st.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	var out []meta.Bucket
	for _, u := range users {
		bs, err := st.ListBuckets(ctx, u)
		if err != nil {
			return nil, err
		}
		out = append(out, bs...)
	}
	slices.SortFunc(out, func(a, b meta.Bucket) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// parseDataObject splits a data object's name s3.d.ID.N.
func parseDataObject(name string) (id, no uint64, ok bool) {
	rest, ok := strings.CutPrefix(name, "s3.d.")
	if !ok || len(rest) != 16+1+8 || rest[16] != '.' {
		return 0, 0, false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; i != 16 && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return 0, 0, false // not a name dataObjectName makes
		}
	}
	id, err1 := strconv.ParseUint(rest[:16], 16, 64)
	no, err2 := strconv.ParseUint(rest[17:], 16, 64)
	return id, no, err1 == nil && err2 == nil
}

// listPool lists the pool: its data objects, bucket indexes and uploads.
func (c *checker) listPool(ctx context.Context) error {
	n := 0
	for o, err := range c.g.meta.IO().Objects(ctx) {
		if err != nil {
			return fmt.Errorf("list pool: %w", err)
		}
		n++
		c.progress("pool", "", n)
		if id, no, ok := parseDataObject(o.Name); ok {
			c.pool[id] = append(c.pool[id], no)
			c.rep.PoolDataObjects++
		} else if rest, ok := strings.CutPrefix(o.Name, "kv.b."); ok {
			if id, ok := strings.CutSuffix(rest, ".index"); ok {
				c.indexes = append(c.indexes, id)
			}
		} else if id, ok := strings.CutPrefix(o.Name, "s3.parts."); ok {
			c.uploads = append(c.uploads, id)
		}
	}
	return nil
}

// readParts notes the data every part names — of the checked buckets'
// uploads, whose parts' data are checked, and with Leaks of every upload
// in the pool.
func (c *checker) readParts(ctx context.Context, buckets []meta.Bucket) error {
	st := c.g.meta
	seen := map[string]bool{}
	read := func(b *meta.Bucket, u meta.Upload) error {
		seen[u.ID] = true
		c.progress("uploads", "", len(seen))
		parts, err := st.AllParts(ctx, u.ID)
		if errors.Is(err, meta.ErrNoSuchUpload) {
			return nil // finished meanwhile: its entry is read next
		}
		if err != nil {
			return err
		}
		for _, p := range parts {
			c.refs[p.ID] = true
		}
		if b == nil {
			return nil
		}
		c.rep.Uploads++
		c.rep.Parts += len(parts)
		return c.checkParts(ctx, *b, u, parts)
	}
	for _, b := range buckets {
		after := ""
		for {
			ups, more, err := st.ListUploads(ctx, b, "", after, 1000)
			if err != nil {
				return err
			}
			for _, u := range ups {
				after = meta.UploadMarker(u.Key, u.ID)
				if err := read(&b, u); err != nil {
					return err
				}
			}
			if !more || len(ups) == 0 {
				break
			}
		}
	}
	for _, id := range c.uploads {
		if !seen[id] {
			if err := read(nil, meta.Upload{ID: id}); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkParts notes the parts of an upload whose data are missing or
// short, after reading the parts again (a part uploaded again meanwhile
// has new data).
func (c *checker) checkParts(ctx context.Context, b meta.Bucket, u meta.Upload, parts []meta.Part) error {
	l := c.g.data.Layout()
	var wants []objectWant
	for i, p := range parts {
		for no := range l.ObjectCount(uint64(p.Size)) {
			wants = append(wants, objectWant{entry: i, name: dataObjectName(p.ID, no), size: l.ObjectLen(uint64(p.Size), no)})
		}
	}
	bad, err := c.statWants(ctx, wants)
	if err != nil || len(bad) == 0 {
		return err
	}
	now, err := c.g.meta.AllParts(ctx, u.ID)
	if errors.Is(err, meta.ErrNoSuchUpload) {
		return nil
	}
	if err != nil {
		return err
	}
	cur := map[int]uint64{}
	for _, p := range now {
		cur[p.Number] = p.ID
	}
	for i, p := range parts {
		if detail, ok := bad[i]; ok && cur[p.Number] == p.ID {
			c.note(&c.rep.BrokenParts, CheckProblem{Bucket: b.Name, Key: u.Key, Upload: u.ID, Data: fmt.Sprintf("%016x", p.ID), Detail: fmt.Sprintf("part %d: %s (%d bytes)", p.Number, detail, p.Size)})
		}
	}
	return nil
}

// readIndex notes the data of every entry of an index not checked.
func (c *checker) readIndex(ctx context.Context, bucketID string) error {
	ix, ok, err := c.g.meta.IndexByID(ctx, bucketID)
	if err != nil || !ok {
		return err
	}
	n := 0
	return ix.Walk(ctx, "", func(_, _ string, st meta.Stored, derr error) bool {
		n++
		c.progress("index", "id "+bucketID, n)
		if derr != nil {
			c.unreadable++
		} else {
			for _, x := range st.Entry.Extents {
				c.refs[x.ID] = true
			}
		}
		return false
	})
}

// checkBatch is how many entries' data are checked at once.
const checkBatch = 256

// checkIndex walks a checked bucket's index: every key decodes, and
// every entry's data objects exist whole.
func (c *checker) checkIndex(ctx context.Context, b meta.Bucket) error {
	ix, ok, err := c.g.meta.IndexByID(ctx, b.ID) // not made when missing: a check writes nothing
	if err != nil || !ok {
		return err
	}
	var batch []brokenEntry
	var werr error
	err = ix.Walk(ctx, "", func(name, id string, st meta.Stored, derr error) bool {
		c.rep.Entries++
		c.progress("index", b.Name, c.rep.Entries)
		if derr != nil {
			c.unreadable++
			c.note(&c.rep.Undecodable, CheckProblem{Bucket: b.Name, Key: fmt.Sprintf("%q", meta.VersionKey(name, id)), Detail: fmt.Sprintf("%v (in kv store b.%s)", derr, b.ID)})
			return false
		}
		if !st.Live {
			return false // a tombstone
		}
		for _, x := range st.Entry.Extents {
			c.refs[x.ID] = true
		}
		if len(st.Entry.Extents) > 0 {
			batch = append(batch, brokenEntry{bucket: b, name: name, id: id, entry: st.Entry})
		}
		if len(batch) >= checkBatch {
			werr = c.checkData(ctx, ix, batch)
			batch = batch[:0]
			return werr != nil
		}
		return false
	})
	if err == nil {
		err = werr
	}
	if err == nil && len(batch) > 0 {
		err = c.checkData(ctx, ix, batch)
	}
	return err
}

// objectWant is one data object an entry needs, and how long.
type objectWant struct {
	entry    int
	name     string
	no, size uint64
}

// checkData stats the data objects of a batch of entries and notes those
// missing or short, after reading the entry again (an entry overwritten
// meanwhile has new data; its old data may be gone by now).
func (c *checker) checkData(ctx context.Context, ix *meta.Index, es []brokenEntry) error {
	l := c.g.data.Layout()
	var wants []objectWant
	for i, e := range es {
		for _, x := range e.entry.Extents {
			for no := range l.ObjectCount(uint64(x.Size)) {
				wants = append(wants, objectWant{entry: i, name: dataObjectName(x.ID, no), size: l.ObjectLen(uint64(x.Size), no)})
			}
		}
	}
	bad, err := c.statWants(ctx, wants)
	if err != nil {
		return err
	}
	for i, e := range es {
		detail, ok := bad[i]
		if !ok {
			continue
		}
		cur, err := ix.Current(ctx, meta.VersionKey(e.name, e.id))
		if err != nil {
			return err
		}
		if !cur.Live || !slices.Equal(cur.Entry.Extents, e.entry.Extents) {
			continue // changed meanwhile
		}
		c.broken = append(c.broken, e)
		c.note(&c.rep.Missing, CheckProblem{Bucket: e.bucket.Name, Key: e.name, Version: e.id, Detail: fmt.Sprintf("%s (%d bytes in %d extents)", detail, e.entry.Size, len(e.entry.Extents))})
	}
	return nil
}

// statWants stats the objects wants names and returns, by entry, the
// first problem found with its objects: missing, or short.
func (c *checker) statWants(ctx context.Context, wants []objectWant) (map[int]string, error) {
	stats := c.g.statObjects(ctx, wants)
	c.rep.DataObjects += len(wants)
	bad := map[int]string{}
	for i, w := range wants {
		s := stats[i]
		if s.err != nil && !errors.Is(s.err, rados.ErrNotFound) {
			return nil, fmt.Errorf("stat %s: %w", w.name, s.err)
		}
		if _, seen := bad[w.entry]; seen {
			continue
		}
		if s.err != nil {
			bad[w.entry] = fmt.Sprintf("object %s is missing", w.name)
		} else if s.st.Size < w.size {
			bad[w.entry] = fmt.Sprintf("object %s is %d bytes, the extent needs %d", w.name, s.st.Size, w.size)
		}
	}
	return bad, nil
}

type statResult struct {
	st  rados.ObjectStat
	err error
}

// statWorkers bounds the stats a check has in flight.
const statWorkers = 16

// statObjects stats the objects wants names, statWorkers at a time.
func (g *Gateway) statObjects(ctx context.Context, wants []objectWant) []statResult {
	out := make([]statResult, len(wants))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(statWorkers, len(wants)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				st, err := g.cfg.IO.Stat(ctx, wants[i].name)
				out[i] = statResult{st, err}
			}
		}()
	}
	for i := range wants {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// readGarbage reads the garbage list: every record's data id, and notes
// the old records whose data something names.
func (c *checker) readGarbage(ctx context.Context) (map[uint64]bool, error) {
	ids := map[uint64]bool{}
	cutoff := c.now.Add(-c.opts.MinIdle)
	for shard := range meta.GCShards {
		var after uint64
		for {
			gs, more, err := c.g.meta.Garbage(ctx, shard, after, 1000)
			if err != nil {
				return nil, err
			}
			for _, r := range gs {
				after = r.ID
				ids[r.ID] = true
				c.rep.GarbageRecords++
				c.progress("garbage", "", c.rep.GarbageRecords)
				if !c.refs[r.ID] || r.Since.After(cutoff) {
					continue
				}
				if _, mine := c.names[r.BucketID]; !mine && !c.opts.Leaks {
					continue
				}
				c.liveRecs = append(c.liveRecs, r.ID)
				c.note(&c.rep.LiveGarbage, CheckProblem{Bucket: c.bucketName(r.BucketID), Key: r.Key, Upload: r.UploadID, Data: fmt.Sprintf("%016x", r.ID),
					Detail: fmt.Sprintf("recorded as garbage since %s, but an entry or a part names its data", r.Since.Format(time.RFC3339))})
			}
			if !more || len(gs) == 0 {
				break
			}
		}
	}
	return ids, nil
}

func (c *checker) bucketName(id string) string {
	if n, ok := c.names[id]; ok {
		return n
	}
	if id == "" {
		return ""
	}
	return "id:" + id
}

// findLeaks stats the objects of every data id nothing names: those
// still there and idle for MinIdle are leaked.
func (c *checker) findLeaks(ctx context.Context, garbage map[uint64]bool) error {
	var ids []uint64
	var wants []objectWant
	for id, nos := range c.pool {
		if c.refs[id] || garbage[id] {
			continue
		}
		slices.Sort(nos)
		for _, no := range nos {
			wants = append(wants, objectWant{entry: len(ids), name: dataObjectName(id, no), no: no})
		}
		ids = append(ids, id)
	}
	if c.opts.Progress != nil {
		c.opts.Progress(CheckProgress{Phase: "leaks", Done: len(wants)})
	}
	stats := c.g.statObjects(ctx, wants)
	l := c.g.data.Layout()
	type leak struct {
		objects int
		size    uint64
		newest  time.Time
	}
	found := make([]leak, len(ids))
	for i, w := range wants {
		s := stats[i]
		if errors.Is(s.err, rados.ErrNotFound) {
			continue // removed since the listing
		}
		if s.err != nil {
			return fmt.Errorf("stat %s: %w", w.name, s.err)
		}
		f := &found[w.entry]
		f.objects++
		// Enough bytes that the collector's removal reaches this object.
		f.size = max(f.size, l.FileOffset(w.no, 0)+max(s.st.Size, 1))
		if s.st.ModTime.After(f.newest) {
			f.newest = s.st.ModTime
		}
	}
	cutoff := c.now.Add(-c.opts.MinIdle)
	for i, id := range ids {
		f := found[i]
		switch {
		case f.objects == 0:
			continue
		case f.newest.After(cutoff):
			c.rep.InFlight++
			continue
		}
		c.leaked = append(c.leaked, meta.Garbage{ID: id, Size: int64(f.size), Since: f.newest})
		c.note(&c.rep.Leaked, CheckProblem{Data: fmt.Sprintf("%016x", id),
			Detail: fmt.Sprintf("%d object(s), %d bytes, unchanged since %s, named by no entry, part or garbage record", f.objects, f.size, f.newest.UTC().Format(time.RFC3339))})
	}
	slices.SortFunc(c.rep.Leaked.Examples, func(a, b CheckProblem) int { return strings.Compare(a.Data, b.Data) })
	return nil
}

// fix does what opts allow: leaked data onto the garbage list (dated
// when last written, so the next collection takes them), records naming
// live data dropped, and with RemoveBroken the broken entries removed.
func (c *checker) fix(ctx context.Context) error {
	st := c.g.meta
	if len(c.leaked) > 0 && c.unreadable > 0 {
		c.rep.LeaksKept = fmt.Sprintf("%d index key(s) do not decode: the data they name may be among the leaks, so none was put on the garbage list; deal with those keys first", c.unreadable)
	} else if len(c.leaked) > 0 {
		if err := st.AddGarbage(ctx, c.leaked...); err != nil {
			return err
		}
		c.rep.Leaked.Fixed = len(c.leaked)
		markFixed(&c.rep.Leaked, func(CheckProblem) bool { return true })
	}
	if len(c.liveRecs) > 0 {
		if err := st.DropGarbage(ctx, c.liveRecs...); err != nil {
			return err
		}
		c.rep.LiveGarbage.Fixed = len(c.liveRecs)
		markFixed(&c.rep.LiveGarbage, func(CheckProblem) bool { return true })
	}
	if !c.opts.RemoveBroken {
		return nil
	}
	removed := map[string]bool{}
	for _, e := range c.broken {
		ix, err := st.Index(ctx, e.bucket)
		if err != nil {
			return err
		}
		cur, err := ix.Current(ctx, meta.VersionKey(e.name, e.id))
		if err != nil {
			return err
		}
		if !cur.Live || !slices.Equal(cur.Entry.Extents, e.entry.Extents) {
			continue // changed since: no longer this entry
		}
		gs := make([]meta.Garbage, len(e.entry.Extents))
		for i, x := range e.entry.Extents {
			gs[i] = meta.Garbage{ID: x.ID, Size: x.Size, BucketID: e.bucket.ID, Key: e.name}
		}
		if err := st.AddGarbage(ctx, gs...); err != nil {
			return err
		}
		err = ix.RemoveVersion(ctx, e.name, e.id, cur)
		if errors.Is(err, meta.ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		c.rep.Missing.Fixed++
		removed[e.bucket.Name+"\x00"+e.name+"\x00"+e.id] = true
	}
	markFixed(&c.rep.Missing, func(p CheckProblem) bool { return removed[p.Bucket+"\x00"+p.Key+"\x00"+p.Version] })
	return nil
}

func markFixed(f *Finding, fixed func(CheckProblem) bool) {
	for i := range f.Examples {
		if fixed(f.Examples[i]) {
			f.Examples[i].Fixed = true
		}
	}
}
