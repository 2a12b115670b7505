package meta

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/kv"
)

// Object versions (docs/S3.md, "Versioning"). A bucket's index holds,
// for an object named NAME:
//
//	NAME            its null version: every object of a bucket never
//	                versioned, and what a PUT or DELETE writes while
//	                versioning is suspended
//	NAME\x00ID      each version with an id, written while versioning is
//	                enabled; never changed but for its ACL and tags
//
// An id is 16 hex digits of the version's stamp (Unix nanoseconds)
// inverted, then 8 random hex digits: a name's versions follow it in
// the index newest first, and two gateways writing one name at once
// never pick the same id. The null version sits among them by its
// stamp, kept in its entry. The latest version is the newest of the
// null version and the first with an id, so one scan of the index
// answers listings of current objects (the versions behind a name are
// read past) and of versions alike.
//
// Every change is one atomic write of one index key: a new version is
// an exclusive create of a fresh key, a removed version a
// compare-and-swap of its key to nothing, the null version a
// compare-and-swap as before versioning. Nothing moves between keys, so
// no multi-key transaction (which the kv store gives only within one
// leaf) is needed, whichever gateways serve the bucket. A new version's
// stamp is later than the latest version's (read just before), so
// gateways' clocks running apart do not reorder one name's versions.

// NullVersion is the id of the version without one.
const NullVersion = "null"

// Versioning states of a bucket (Bucket.Versioning).
const (
	VersioningEnabled   = "Enabled"
	VersioningSuspended = "Suspended"
)

// Errors of versions; test for them with errors.Is.
var (
	ErrNoSuchVersion = errors.New("s3 meta: no such version")
	ErrNameTooLong   = errors.New("s3 meta: name too long for versions")
)

const (
	versionSep   = "\x00"
	versionIDLen = 24
)

// MaxVersionedName is the longest name that can have versions with ids:
// NAME\x00ID must fit the kv store's keys. (S3 allows 1,024 bytes; a
// longer name keeps only its null version.)
const MaxVersionedName = kv.MaxKeyLen - len(versionSep) - versionIDLen

// NewVersionID returns a new id for a version of stamp.
func NewVersionID(stamp int64) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return fmt.Sprintf("%016x%08x", ^uint64(stamp), binary.BigEndian.Uint32(b[:]))
}

// ValidVersionID says whether id is NullVersion or an id NewVersionID
// could have made.
func ValidVersionID(id string) bool {
	if id == NullVersion {
		return true
	}
	if len(id) != versionIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// VersionIDStamp is the stamp a valid id other than NullVersion carries.
func VersionIDStamp(id string) int64 {
	v, _ := strconv.ParseUint(id[:16], 16, 64)
	return int64(^v)
}

// VersionKey is the index key of name's version id ("" or NullVersion:
// the name itself).
func VersionKey(name, id string) string {
	if id == "" || id == NullVersion {
		return name
	}
	return name + versionSep + id
}

// splitVersionKey is VersionKey's inverse.
func splitVersionKey(k string) (name, id string) {
	if i := strings.IndexByte(k, 0); i >= 0 {
		return k[:i], k[i+1:]
	}
	return k, NullVersion
}

// VersionStamp orders an object's versions: the later, the newer.
func (en Entry) VersionStamp() int64 {
	if en.Stamp != 0 {
		return en.Stamp
	}
	return en.MTime.UnixNano()
}

// NextStamp is the stamp for a version written at now over latest
// (found: whether there is one): now, or just after latest's.
func NextStamp(now int64, latest Entry, found bool) int64 {
	if found && latest.VersionStamp() >= now {
		return latest.VersionStamp() + 1
	}
	return now
}

// orderVersions merges a name's null version (nil: none) into its other
// versions (newest first, as the index holds them) by stamp.
func orderVersions(null *Entry, ids []Entry) []Entry {
	if null == nil {
		return ids
	}
	out := make([]Entry, 0, len(ids)+1)
	placed := false
	for _, v := range ids {
		if !placed && null.VersionStamp() > v.VersionStamp() {
			out = append(out, *null)
			placed = true
		}
		out = append(out, v)
	}
	if !placed {
		out = append(out, *null)
	}
	return out
}

// scanBatch is how many index entries a version scan asks for at once.
const scanBatch = 256

// Scan calls fn with the versions of each name that has one, newest
// first, in name order, for the index keys in [start, end) ("" end:
// unbounded); fn returns true to stop. A start inside a name's versions
// gives fn only the versions from there. A name's versions are read
// whole before fn sees them.
func (ix *Index) Scan(ctx context.Context, start, end string, fn func(name string, versions []Entry) (stop bool)) error {
	return ix.scan(ctx, start, end, scanBatch, false, fn)
}

// scan is Scan reading batch entries at a time. With latestOnly, fn is
// given at most a name's null version and its newest with an id (enough
// to know its latest), and a run of older versions that fills a batch is
// skipped with one seek to the next name.
func (ix *Index) scan(ctx context.Context, start, end string, batch int, latestOnly bool, fn func(name string, versions []Entry) (stop bool)) error {
	var (
		name string
		have bool
		null *Entry
		ids  []Entry
	)
	flush := func() bool {
		if !have {
			return false
		}
		vs := orderVersions(null, ids)
		have, null, ids = false, nil, nil
		return len(vs) > 0 && fn(name, vs)
	}
	for {
		pairs, more, err := ix.kv.List(ctx, start, end, batch)
		if err != nil {
			return fmt.Errorf("index scan from %q: %w", start, err)
		}
		for _, p := range pairs {
			n, id := splitVersionKey(p.Key)
			if have && n != name && flush() {
				return nil
			}
			name, have = n, true
			if latestOnly && id != NullVersion && len(ids) > 0 {
				continue // an older version
			}
			en, err := DecodeEntry(p.Value)
			if err != nil {
				return fmt.Errorf("index entry %q: %w", p.Key, err)
			}
			if en.Deleted || (id != NullVersion && !ValidVersionID(id)) {
				continue
			}
			en.VersionID = id
			if id == NullVersion {
				null = &en
			} else {
				ids = append(ids, en)
			}
		}
		if !more || len(pairs) == 0 {
			flush()
			return nil
		}
		start = pairs[len(pairs)-1].Key + "\x00"
		if latestOnly && len(ids) > 0 {
			// The batch ended in name's older versions: seek past
			// them (every key of name's versions is below name\x01,
			// every other name at or above it).
			if start = name + "\x01"; end != "" && start >= end {
				flush()
				return nil
			}
		}
	}
}

// ListLatest is List for a bucket with versions: up to limit objects
// whose latest version is not a delete marker, with names in [start,
// end), each with its latest version, and whether more may follow.
func (ix *Index) ListLatest(ctx context.Context, start, end string, limit int) ([]Listed, bool, error) {
	var out []Listed
	more := false
	if limit <= 0 {
		return nil, true, nil
	}
	// A page of names without versions is one index read, as List's.
	err := ix.scan(ctx, start, end, max(limit+1, listBatch), true, func(name string, vs []Entry) bool {
		if name < start || vs[0].DeleteMarker {
			return false // the tail of a name before start, or hidden
		}
		if len(out) == limit {
			more = true
			return true
		}
		out = append(out, Listed{Key: name, Entry: vs[0]})
		return false
	})
	return out, more, err
}

// Versions returns name's versions, newest first (none: an empty list).
func (ix *Index) Versions(ctx context.Context, name string) ([]Entry, error) {
	var out []Entry
	err := ix.Scan(ctx, name, name+"\x01", func(n string, vs []Entry) bool {
		if n == name {
			out = vs
		}
		return false
	})
	return out, err
}

// Latest returns name's latest version, which may be a delete marker
// (ErrNoSuchObject when it has none). It reads the null version and the
// newest with an id in one index read.
func (ix *Index) Latest(ctx context.Context, name string) (Entry, error) {
	pairs, _, err := ix.kv.List(ctx, name, name+"\x01", 2)
	if err != nil {
		return Entry{}, fmt.Errorf("index latest %q: %w", name, err)
	}
	var best *Entry
	for _, p := range pairs {
		_, id := splitVersionKey(p.Key)
		en, err := DecodeEntry(p.Value)
		if err != nil {
			return Entry{}, fmt.Errorf("index entry %q: %w", p.Key, err)
		}
		if en.Deleted || (id != NullVersion && !ValidVersionID(id)) {
			continue
		}
		en.VersionID = id
		if best == nil || en.VersionStamp() > best.VersionStamp() {
			best = &en
		}
	}
	if best == nil {
		return Entry{}, fmt.Errorf("%w: %s", ErrNoSuchObject, name)
	}
	return *best, nil
}

// Version returns name's version id (ErrNoSuchVersion when absent).
func (ix *Index) Version(ctx context.Context, name, id string) (Entry, error) {
	st, err := ix.Current(ctx, VersionKey(name, id))
	if err != nil {
		return Entry{}, err
	}
	if !st.Live {
		return Entry{}, fmt.Errorf("%w: %s version %s", ErrNoSuchVersion, name, id)
	}
	st.Entry.VersionID = id
	if id == "" {
		st.Entry.VersionID = NullVersion
	}
	return st.Entry, nil
}

// PutVersion adds en as a new version of name with an id, stamped at
// least at en's MTime and after stamp after (the latest version's,
// read by the caller; 0 for none), and returns it with its id.
func (ix *Index) PutVersion(ctx context.Context, name string, en Entry, after int64) (Entry, error) {
	if len(name) > MaxVersionedName {
		return Entry{}, fmt.Errorf("%w: a name of %d bytes can have no versions (at most %d)", ErrNameTooLong, len(name), MaxVersionedName)
	}
	en.Stamp = max(en.MTime.UnixNano(), after+1)
	for attempt := 0; attempt < 3; attempt++ {
		id := NewVersionID(en.Stamp)
		err := ix.kv.CompareAndSwap(ctx, VersionKey(name, id), nil, en.Encode())
		if errors.Is(err, kv.ErrConflict) {
			continue // the same id drawn twice
		}
		if err != nil {
			return Entry{}, fmt.Errorf("index put version of %q: %w", name, err)
		}
		en.VersionID = id
		return en, nil
	}
	return Entry{}, fmt.Errorf("index put version of %q: %w", name, ErrConflict)
}

// RemoveVersion removes name's version id if the index still holds
// prev (read by Current for VersionKey(name, id)), else ErrConflict.
func (ix *Index) RemoveVersion(ctx context.Context, name, id string, prev Stored) error {
	if prev.raw == nil {
		return fmt.Errorf("%w: %s version %s", ErrNoSuchVersion, name, id)
	}
	err := ix.kv.CompareAndSwap(ctx, VersionKey(name, id), prev.raw, nil)
	if errors.Is(err, kv.ErrConflict) {
		return fmt.Errorf("index remove %q version %s: %w", name, id, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("index remove %q version %s: %w", name, id, err)
	}
	return nil
}

// SetBucketVersioning sets the versioning state of bucket b: Enabled or
// Suspended (a bucket that had versions never goes back to none).
func (s *Store) SetBucketVersioning(ctx context.Context, b Bucket, state string) (Bucket, error) {
	if state != VersioningEnabled && state != VersioningSuspended {
		return Bucket{}, fmt.Errorf("bucket %s: versioning state %q (Enabled or Suspended)", b.Name, state)
	}
	return s.updateBucket(ctx, b, func(cur *Bucket) { cur.Versioning = state })
}
