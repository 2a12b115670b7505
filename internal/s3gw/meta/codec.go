package meta

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

// ErrCorrupt: a stored record does not decode.
var ErrCorrupt = errors.New("s3 meta: corrupt record")

// Limits of what one record holds.
const (
	maxName  = 1024
	maxMeta  = 64
	maxValue = 8 << 10
	// MaxParts bounds an object's extents (a completed multipart
	// upload's parts) so its index entry stays under kv.MaxValueLen.
	MaxParts = 3000
)

// Extent is a run of an object's bytes: a striped data object of Size bytes.
type Extent struct {
	ID   uint64
	Size int64
}

// Entry is an object in a bucket's index.
type Entry struct {
	Size        int64
	ETag        string // hex MD5, or md5-of-md5s "-N"; without quotes
	MTime       time.Time
	ContentType string
	// Meta holds the user metadata (x-amz-meta-* lowercased, without
	// the prefix) and, under their lowercased header names, the stored
	// headers (content-encoding, cache-control, ...); see s3gw.
	Meta map[string]string
	// Extents are the data, in order.
	Extents []Extent
	// Deleted marks a tombstone: readers treat the key as absent. (The
	// gateway wrote them while the kv store could not rebalance; none
	// writes them now, and listings still skip them.)
	Deleted bool
	// Owner is the object's owner (a user name); "" in an entry written
	// before ACLs (version 1): the bucket's owner, with a private ACL.
	Owner string
	// ACL is the object's access control list (version 2).
	ACL ACL
	// Tags is the object's tag set, in the order given (version 3).
	Tags []Tag
	// DeleteMarker marks a delete marker: a version without data that
	// hides the versions before it (version 4; versions.go).
	DeleteMarker bool
	// Stamp orders an object's versions (Unix nanoseconds, later is
	// newer; 0: MTime's, as in entries before version 4).
	Stamp int64

	// VersionID is the version's id, taken from the index key it was
	// read under (not encoded): NullVersion for the entry under the
	// object's name, "" when read without versions in mind (Index.Get).
	VersionID string
	// Checksum is the object's additional checksum, if it was given
	// one (version 5).
	Checksum Checksum
	// Parts lists a completed multipart upload's parts with their
	// checksums, when it had them (version 5).
	Parts []PartSum
}

func encodeMap(e *encoding.Encoder, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e.Uvarint(uint64(len(keys)))
	for _, k := range keys {
		e.String(k)
		e.String(m[k])
	}
}

func decodeMap(d *encoding.Decoder) map[string]string {
	n := d.Count(2)
	if n > maxMeta {
		d.Fail(fmt.Errorf("%d metadata entries", n))
		return nil
	}
	m := make(map[string]string, n)
	for i := 0; i < n && d.Err() == nil; i++ {
		k := d.String(maxName)
		m[k] = d.String(maxValue)
	}
	return m
}

// Encode returns the entry's encoding (version 5: version 1's fields,
// then the owner and the ACL (2), the tags (3), the delete marker flag
// and the stamp (4), the checksum and the parts' checksums (5)).
func (en Entry) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(5, 1)
	e.Varint(en.Size)
	e.String(en.ETag)
	e.Varint(en.MTime.UnixNano())
	e.String(en.ContentType)
	encodeMap(&e, en.Meta)
	e.Uvarint(uint64(len(en.Extents)))
	for _, x := range en.Extents {
		e.Uint64(x.ID)
		e.Varint(x.Size)
	}
	e.Bool(en.Deleted)
	e.String(en.Owner)
	encodeACL(&e, en.ACL)
	encodeTags(&e, en.Tags)
	e.Bool(en.DeleteMarker)
	e.Varint(en.Stamp)
	encodeChecksum(&e, en.Checksum)
	encodePartSums(&e, en.Parts)
	e.End(mk)
	return e.Data()
}

// DecodeEntry decodes an index entry; errors wrap ErrCorrupt.
func DecodeEntry(b []byte) (Entry, error) {
	var en Entry
	d := encoding.NewDecoder(b)
	v := d.Begin(5)
	en.Size = d.Varint()
	en.ETag = d.String(128)
	en.MTime = time.Unix(0, d.Varint()).UTC()
	en.ContentType = d.String(maxValue)
	en.Meta = decodeMap(d)
	n := d.Count(9)
	if n > MaxParts {
		d.Fail(fmt.Errorf("%d extents", n))
	}
	var sum int64
	for i := 0; i < n && d.Err() == nil; i++ {
		x := Extent{ID: d.Uint64(), Size: d.Varint()}
		if x.Size < 0 {
			d.Fail(fmt.Errorf("extent of %d bytes", x.Size))
		}
		sum += x.Size
		en.Extents = append(en.Extents, x)
	}
	en.Deleted = d.Bool()
	if v >= 2 {
		en.Owner = d.String(maxName)
		en.ACL = decodeACL(d)
	}
	if v >= 3 {
		en.Tags = decodeTags(d)
	}
	if v >= 4 {
		en.DeleteMarker = d.Bool()
		en.Stamp = d.Varint()
	}
	if v >= 5 {
		en.Checksum = decodeChecksum(d)
		en.Parts = decodePartSums(d)
	}
	d.End()
	if d.Err() == nil && !en.Deleted && sum != en.Size {
		d.Fail(fmt.Errorf("extents hold %d bytes, size %d", sum, en.Size))
	}
	if d.Err() == nil && en.DeleteMarker && en.Size != 0 {
		d.Fail(fmt.Errorf("a delete marker of %d bytes", en.Size))
	}
	if err := d.Finish(); err != nil {
		return Entry{}, fmt.Errorf("%w: index entry: %w", ErrCorrupt, err)
	}
	return en, nil
}

// Key is an access key.
type Key struct {
	Access, Secret string
}

// User is a gateway user.
type User struct {
	Name        string
	DisplayName string
	Keys        []Key
	Created     time.Time
}

// Encode returns the user's encoding (version 1).
func (u User) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(u.Name)
	e.String(u.DisplayName)
	e.Uvarint(uint64(len(u.Keys)))
	for _, k := range u.Keys {
		e.String(k.Access)
		e.String(k.Secret)
	}
	e.Varint(u.Created.UnixNano())
	e.End(mk)
	return e.Data()
}

// DecodeUser decodes a user; errors wrap ErrCorrupt.
func DecodeUser(b []byte) (User, error) {
	var u User
	d := encoding.NewDecoder(b)
	d.Begin(1)
	u.Name = d.String(maxName)
	u.DisplayName = d.String(maxName)
	n := d.Count(2)
	if n > 100 {
		d.Fail(fmt.Errorf("%d keys", n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		u.Keys = append(u.Keys, Key{Access: d.String(128), Secret: d.String(128)})
	}
	u.Created = time.Unix(0, d.Varint()).UTC()
	d.End()
	if err := d.Finish(); err != nil {
		return User{}, fmt.Errorf("%w: user: %w", ErrCorrupt, err)
	}
	return u, nil
}

// Bucket is a bucket's record.
type Bucket struct {
	Name    string
	Owner   string
	ID      string // names its index and uploads; new at every create
	Created time.Time
	Region  string
	// ACL is the bucket's access control list (version 2; a version 1
	// record decodes with the owner's FULL_CONTROL, S3's default).
	ACL ACL
	// Policy is the bucket policy, a JSON document as PutBucketPolicy
	// gave it ("" for none; version 3).
	Policy string
	// Tags is the bucket's tag set, nil for none (version 4).
	Tags []Tag
	// CORS is the bucket's CORS configuration, nil for none (version 5).
	CORS []CORSRule
	// Versioning is the bucket's versioning state: "" (never enabled),
	// VersioningEnabled or VersioningSuspended (version 6).
	Versioning string
	// Ownership is the bucket's object ownership setting, "" without
	// ownership controls (version 7).
	Ownership string
	// PublicAccessBlock is the bucket's public access block, nil for
	// none (version 7).
	PublicAccessBlock *PublicAccessBlock
	// Lifecycle is the bucket's lifecycle configuration, nil for none
	// (version 8; lifecycle.go).
	Lifecycle []LifecycleRule
}

// MaxPolicy bounds a bucket policy (S3's limit: 20 KiB).
const MaxPolicy = 20 << 10

// Encode returns the bucket's encoding (version 8: version 1's fields,
// then the ACL, the policy, the tags, the CORS rules, the versioning
// state (6), the ownership and the public access block (7), the
// lifecycle rules (8)).
func (b Bucket) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(8, 1)
	e.String(b.Name)
	e.String(b.Owner)
	e.String(b.ID)
	e.Varint(b.Created.UnixNano())
	e.String(b.Region)
	encodeACL(&e, b.ACL)
	e.String(b.Policy)
	encodeTags(&e, b.Tags)
	encodeCORS(&e, b.CORS)
	e.String(b.Versioning)
	e.String(b.Ownership)
	encodePublicAccessBlock(&e, b.PublicAccessBlock)
	encodeLifecycle(&e, b.Lifecycle)
	e.End(mk)
	return e.Data()
}

// DecodeBucket decodes a bucket; errors wrap ErrCorrupt.
func DecodeBucket(p []byte) (Bucket, error) {
	var b Bucket
	d := encoding.NewDecoder(p)
	v := d.Begin(8)
	b.Name = d.String(maxName)
	b.Owner = d.String(maxName)
	b.ID = d.String(maxName)
	b.Created = time.Unix(0, d.Varint()).UTC()
	b.Region = d.String(maxName)
	if v >= 2 {
		b.ACL = decodeACL(d)
	} else if b.Owner != "" {
		b.ACL = Private(b.Owner)
	}
	if v >= 3 {
		b.Policy = d.String(MaxPolicy)
	}
	if v >= 4 {
		b.Tags = decodeTags(d)
	}
	if v >= 5 {
		b.CORS = decodeCORS(d)
	}
	if v >= 6 {
		b.Versioning = d.String(16)
		if b.Versioning != "" && b.Versioning != VersioningEnabled && b.Versioning != VersioningSuspended {
			d.Fail(fmt.Errorf("versioning state %q", b.Versioning))
		}
	}
	if v >= 7 {
		b.Ownership = d.String(32)
		b.PublicAccessBlock = decodePublicAccessBlock(d)
	}
	if v >= 8 {
		b.Lifecycle = decodeLifecycle(d)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return Bucket{}, fmt.Errorf("%w: bucket: %w", ErrCorrupt, err)
	}
	return b, nil
}

// Upload is a multipart upload in progress.
type Upload struct {
	Key, ID     string
	Initiated   time.Time
	ContentType string
	Meta        map[string]string
	// Owner initiated the upload and will own the object; ACL will be
	// the object's (version 2; "" in version 1: the bucket's owner,
	// private).
	Owner string
	ACL   ACL
	// Tags will be the object's tag set (version 3).
	Tags []Tag
	// Checksum is the algorithm and type CreateMultipartUpload chose
	// (x-amz-checksum-algorithm, x-amz-checksum-type), without a value
	// (version 4).
	Checksum Checksum
}

// Encode returns the upload's encoding (version 4: version 1's fields,
// then the owner and the ACL, then the tags, then the checksum).
func (u Upload) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(4, 1)
	e.String(u.Key)
	e.String(u.ID)
	e.Varint(u.Initiated.UnixNano())
	e.String(u.ContentType)
	encodeMap(&e, u.Meta)
	e.String(u.Owner)
	encodeACL(&e, u.ACL)
	encodeTags(&e, u.Tags)
	encodeChecksum(&e, u.Checksum)
	e.End(mk)
	return e.Data()
}

// DecodeUpload decodes an upload; errors wrap ErrCorrupt.
func DecodeUpload(b []byte) (Upload, error) {
	var u Upload
	d := encoding.NewDecoder(b)
	v := d.Begin(4)
	u.Key = d.String(maxName)
	u.ID = d.String(maxName)
	u.Initiated = time.Unix(0, d.Varint()).UTC()
	u.ContentType = d.String(maxValue)
	u.Meta = decodeMap(d)
	if v >= 2 {
		u.Owner = d.String(maxName)
		u.ACL = decodeACL(d)
	}
	if v >= 3 {
		u.Tags = decodeTags(d)
	}
	if v >= 4 {
		u.Checksum = decodeChecksum(d)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return Upload{}, fmt.Errorf("%w: upload: %w", ErrCorrupt, err)
	}
	return u, nil
}

// Part is an uploaded part.
type Part struct {
	Number int
	ETag   string
	Size   int64
	ID     uint64
	MTime  time.Time
	// Checksum is the part's additional checksum, if any (version 2).
	Checksum Checksum
}

// Encode returns the part's encoding (version 2: version 1's fields,
// then the checksum).
func (p Part) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	e.Uvarint(uint64(p.Number))
	e.String(p.ETag)
	e.Varint(p.Size)
	e.Uint64(p.ID)
	e.Varint(p.MTime.UnixNano())
	encodeChecksum(&e, p.Checksum)
	e.End(mk)
	return e.Data()
}

// DecodePart decodes a part; errors wrap ErrCorrupt.
func DecodePart(b []byte) (Part, error) {
	var p Part
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	p.Number = int(d.Uvarint())
	p.ETag = d.String(128)
	p.Size = d.Varint()
	p.ID = d.Uint64()
	p.MTime = time.Unix(0, d.Varint()).UTC()
	if v >= 2 {
		p.Checksum = decodeChecksum(d)
	}
	d.End()
	if d.Err() == nil && (p.Number < 1 || p.Number > 10000 || p.Size < 0) {
		d.Fail(fmt.Errorf("part %d of %d bytes", p.Number, p.Size))
	}
	if err := d.Finish(); err != nil {
		return Part{}, fmt.Errorf("%w: part: %w", ErrCorrupt, err)
	}
	return p, nil
}

// Garbage is data to remove once no index entry names it.
type Garbage struct {
	ID       uint64
	Size     int64
	BucketID string
	Key      string // the object whose entry may name it ("" for none)
	UploadID string // the multipart upload whose part it may be
	Since    time.Time
}

// Encode returns the garbage record's encoding (version 1).
func (g Garbage) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint64(g.ID)
	e.Varint(g.Size)
	e.String(g.BucketID)
	e.String(g.Key)
	e.String(g.UploadID)
	e.Varint(g.Since.UnixNano())
	e.End(mk)
	return e.Data()
}

// DecodeGarbage decodes a garbage record; errors wrap ErrCorrupt.
func DecodeGarbage(b []byte) (Garbage, error) {
	var g Garbage
	d := encoding.NewDecoder(b)
	d.Begin(1)
	g.ID = d.Uint64()
	g.Size = d.Varint()
	g.BucketID = d.String(maxName)
	g.Key = d.String(maxName)
	g.UploadID = d.String(maxName)
	g.Since = time.Unix(0, d.Varint()).UTC()
	d.End()
	if d.Err() == nil && g.Size < 0 {
		d.Fail(fmt.Errorf("garbage of %d bytes", g.Size))
	}
	if err := d.Finish(); err != nil {
		return Garbage{}, fmt.Errorf("%w: garbage: %w", ErrCorrupt, err)
	}
	return g, nil
}
