package meta

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/rados"
)

// LifecycleRule is one rule of a bucket's lifecycle configuration, as
// PutBucketLifecycleConfiguration gave it (s3gw validates it; the
// record keeps what was accepted, so GetBucketLifecycleConfiguration
// answers the same rules).
type LifecycleRule struct {
	ID      string
	Enabled bool
	// LegacyPrefix marks a rule given the old way, with Prefix beside
	// Status rather than in a Filter; its prefix is Filter.Prefix.
	LegacyPrefix bool
	Filter       LifecycleFilter

	// Expiration of current versions: after ExpirationDays days, or on
	// ExpirationDate (zero: none); ExpiredObjectDeleteMarker removes a
	// delete marker left with no other version. MarkerGiven says the
	// Expiration was given as ExpiredObjectDeleteMarker (true or false).
	ExpirationDays            int64
	ExpirationDate            time.Time
	ExpiredObjectDeleteMarker bool
	MarkerGiven               bool
	// NoncurrentDays: a version noncurrent this many days is removed
	// (0: never), except the NewerNoncurrentVersions newest noncurrent
	// ones.
	NoncurrentDays          int64
	NewerNoncurrentVersions int64
	// AbortDays: a multipart upload started this many days ago is
	// aborted (0: never).
	AbortDays int64
	// Transitions and NoncurrentTransitions are kept and returned, never
	// acted on: the gateway has one storage class (docs/S3.md).
	Transitions           []LifecycleTransition
	NoncurrentTransitions []LifecycleTransition
}

// LifecycleFilter selects the objects a rule applies to: every one of
// its conditions holds (S3's Filter, with And's conditions flattened).
type LifecycleFilter struct {
	Prefix string
	Tags   []Tag
	// SizeGreaterThan and SizeLessThan bound the object's size in bytes
	// (negative: no bound).
	SizeGreaterThan int64
	SizeLessThan    int64
	// And marks a filter given as an And of its conditions (kept so the
	// configuration is answered as it was given).
	And bool
}

// LifecycleTransition is a Transition or NoncurrentVersionTransition
// (Days, or Date, and the storage class); Newer is a noncurrent
// transition's NewerNoncurrentVersions.
type LifecycleTransition struct {
	Days         int64
	Date         time.Time
	StorageClass string
	Newer        int64
}

// Bounds of a stored lifecycle configuration: S3's 1,000 rules and IDs
// of 255 characters (in bytes of UTF-8, up to 4 each).
const (
	MaxLifecycleRules = 1000
	MaxLifecycleID    = 255 * 4
	maxTransitions    = 16
)

func encodeTime(e *encoding.Encoder, t time.Time) {
	e.Bool(!t.IsZero())
	if !t.IsZero() {
		e.Varint(t.UnixNano())
	}
}

func decodeTime(d *encoding.Decoder) time.Time {
	if !d.Bool() {
		return time.Time{}
	}
	t := time.Unix(0, d.Varint()).UTC()
	if t.IsZero() {
		d.Fail(errors.New("a date at the zero time"))
	}
	return t
}

func encodeTransitions(e *encoding.Encoder, ts []LifecycleTransition) {
	e.Uvarint(uint64(len(ts)))
	for _, t := range ts {
		e.Varint(t.Days)
		encodeTime(e, t.Date)
		e.String(t.StorageClass)
		e.Varint(t.Newer)
	}
}

func decodeTransitions(d *encoding.Decoder) []LifecycleTransition {
	n := d.Count(4)
	if n > maxTransitions {
		d.Fail(fmt.Errorf("%d transitions", n))
		return nil
	}
	var ts []LifecycleTransition
	for i := 0; i < n && d.Err() == nil; i++ {
		ts = append(ts, LifecycleTransition{Days: d.Varint(), Date: decodeTime(d), StorageClass: d.String(64), Newer: d.Varint()})
	}
	return ts
}

func encodeLifecycle(e *encoding.Encoder, rules []LifecycleRule) {
	e.Uvarint(uint64(len(rules)))
	for _, r := range rules {
		e.String(r.ID)
		e.Bool(r.Enabled)
		e.Bool(r.LegacyPrefix)
		e.String(r.Filter.Prefix)
		encodeTags(e, r.Filter.Tags)
		e.Varint(r.Filter.SizeGreaterThan)
		e.Varint(r.Filter.SizeLessThan)
		e.Bool(r.Filter.And)
		e.Varint(r.ExpirationDays)
		encodeTime(e, r.ExpirationDate)
		e.Bool(r.ExpiredObjectDeleteMarker)
		e.Bool(r.MarkerGiven)
		e.Varint(r.NoncurrentDays)
		e.Varint(r.NewerNoncurrentVersions)
		e.Varint(r.AbortDays)
		encodeTransitions(e, r.Transitions)
		encodeTransitions(e, r.NoncurrentTransitions)
	}
}

// decodeLifecycle reads lifecycle rules; none decodes as nil.
func decodeLifecycle(d *encoding.Decoder) []LifecycleRule {
	n := d.Count(12)
	if n > MaxLifecycleRules {
		d.Fail(fmt.Errorf("%d lifecycle rules", n))
		return nil
	}
	var rules []LifecycleRule
	for i := 0; i < n && d.Err() == nil; i++ {
		r := LifecycleRule{ID: d.String(MaxLifecycleID), Enabled: d.Bool(), LegacyPrefix: d.Bool()}
		r.Filter = LifecycleFilter{Prefix: d.String(maxName), Tags: decodeTags(d), SizeGreaterThan: d.Varint(), SizeLessThan: d.Varint(), And: d.Bool()}
		r.ExpirationDays = d.Varint()
		r.ExpirationDate = decodeTime(d)
		r.ExpiredObjectDeleteMarker = d.Bool()
		r.MarkerGiven = d.Bool()
		r.NoncurrentDays = d.Varint()
		r.NewerNoncurrentVersions = d.Varint()
		r.AbortDays = d.Varint()
		r.Transitions = decodeTransitions(d)
		r.NoncurrentTransitions = decodeTransitions(d)
		if d.Err() == nil && (r.ExpirationDays < 0 || r.NoncurrentDays < 0 || r.NewerNoncurrentVersions < 0 || r.AbortDays < 0) {
			d.Fail(fmt.Errorf("lifecycle rule %q with a negative count of days", r.ID))
		}
		rules = append(rules, r)
	}
	return rules
}

// SetBucketLifecycle replaces the lifecycle configuration of bucket b
// (nil removes it).
func (s *Store) SetBucketLifecycle(ctx context.Context, b Bucket, rules []LifecycleRule) (Bucket, error) {
	if len(rules) > MaxLifecycleRules {
		return Bucket{}, fmt.Errorf("bucket %s: %d lifecycle rules (at most %d)", b.Name, len(rules), MaxLifecycleRules)
	}
	return s.updateBucket(ctx, b, func(cur *Bucket) { cur.Lifecycle = rules })
}

// LifecycleLease is the record that lets one gateway at a time run a
// bucket's lifecycle pass, and lets a pass stopped half way be resumed:
// the xattr of s3.lc.BUCKET_ID, replaced only by a compare-and-write
// over the bytes read (docs/S3.md, "Lifecycle").
type LifecycleLease struct {
	// Holder is the gateway running a pass ("" none), until Until.
	Holder string
	Until  time.Time
	// Pass is the start of the pass under way or last finished (the
	// time its objects were judged against); Marker is the index key it
	// has done everything before ("" none yet); Done says it finished.
	Pass   time.Time
	Marker string
	Done   bool
	// Uploads says the pass has been through the bucket's multipart
	// uploads.
	Uploads bool
}

// Encode returns the lease's encoding (version 1).
func (l LifecycleLease) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(l.Holder)
	encodeTime(&e, l.Until)
	encodeTime(&e, l.Pass)
	e.String(l.Marker)
	e.Bool(l.Done)
	e.Bool(l.Uploads)
	e.End(mk)
	return e.Data()
}

// DecodeLifecycleLease decodes a lease; errors wrap ErrCorrupt.
func DecodeLifecycleLease(b []byte) (LifecycleLease, error) {
	var l LifecycleLease
	d := encoding.NewDecoder(b)
	d.Begin(1)
	l.Holder = d.String(maxName)
	l.Until = decodeTime(d)
	l.Pass = decodeTime(d)
	l.Marker = d.String(maxName + 64)
	l.Done = d.Bool()
	l.Uploads = d.Bool()
	d.End()
	if err := d.Finish(); err != nil {
		return LifecycleLease{}, fmt.Errorf("%w: lifecycle lease: %w", ErrCorrupt, err)
	}
	return l, nil
}

const leaseAttr = "s3.lc"

func leaseObj(bucketID string) string { return "s3.lc." + bucketID }

// LeaseRecord is a lease as read, to be replaced by SwapLease.
type LeaseRecord struct {
	Lease LifecycleLease
	raw   []byte // nil: none stored
}

// GetLease reads bucket id's lifecycle lease (the zero record when
// there is none). A record that does not decode reads as none, so a
// pass can start over it.
func (s *Store) GetLease(ctx context.Context, bucketID string) (LeaseRecord, error) {
	raw, err := s.io.GetXattr(ctx, leaseObj(bucketID), leaseAttr)
	if errors.Is(err, rados.ErrNotFound) || errors.Is(err, rados.ErrNoAttr) {
		return LeaseRecord{}, nil
	}
	if err != nil {
		return LeaseRecord{}, fmt.Errorf("lifecycle lease of %s: %w", bucketID, err)
	}
	l, derr := DecodeLifecycleLease(raw)
	if derr != nil {
		return LeaseRecord{raw: raw}, nil
	}
	return LeaseRecord{Lease: l, raw: raw}, nil
}

// SwapLease stores l for bucket id if the record is still prev (read by
// GetLease), else ErrConflict; it returns the new record.
func (s *Store) SwapLease(ctx context.Context, bucketID string, prev LeaseRecord, l LifecycleLease) (LeaseRecord, error) {
	raw := l.Encode()
	w := rados.NewWriteOp()
	if prev.raw == nil {
		w.Create(true)
	} else {
		w.CmpXattr(leaseAttr, rados.CmpEq, prev.raw)
	}
	w.SetXattr(leaseAttr, raw)
	err := s.io.OperateWrite(ctx, leaseObj(bucketID), w)
	if errors.Is(err, rados.ErrCompareFailed) || errors.Is(err, rados.ErrExists) || (prev.raw != nil && errors.Is(err, rados.ErrNotFound)) {
		return LeaseRecord{}, fmt.Errorf("lifecycle lease of %s: %w", bucketID, ErrConflict)
	}
	if err != nil {
		return LeaseRecord{}, fmt.Errorf("lifecycle lease of %s: %w", bucketID, err)
	}
	return LeaseRecord{Lease: l, raw: raw}, nil
}

// RemoveLease forgets bucket id's lease (its bucket is gone).
func (s *Store) RemoveLease(ctx context.Context, bucketID string) error {
	if err := s.io.Delete(ctx, leaseObj(bucketID)); err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("lifecycle lease of %s: %w", bucketID, err)
	}
	return nil
}

// AllBuckets returns every bucket's record, by owner then name.
func (s *Store) AllBuckets(ctx context.Context) ([]Bucket, error) {
	users, err := s.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	var out []Bucket
	for _, u := range users {
		bs, err := s.ListBuckets(ctx, u)
		if errors.Is(err, rados.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, bs...)
	}
	return out, nil
}
