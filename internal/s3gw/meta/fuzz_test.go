package meta

import (
	"github.com/cuttlestore/cuttle/encoding"
	"reflect"
	"testing"
	"time"
)

func TestRoundTrips(t *testing.T) {
	now := time.Unix(1700000000, 123).UTC()
	en := Entry{Size: 10, ETag: "abc-2", MTime: now, ContentType: "text/plain", Meta: map[string]string{"x-amz-meta-a": "1"}, Extents: []Extent{{1, 4}, {2, 6}},
		Owner: "u", ACL: ACL{Grants: []Grant{{Kind: GranteeUser, ID: "v", Perm: PermReadACP}, {Kind: GranteeLogDelivery, Perm: PermWrite}}},
		Tags: []Tag{{"z", "1"}, {"a", ""}}, Stamp: 1700000000000000999, Checksum: Checksum{Algorithm: "CRC32", Type: "COMPOSITE", Value: "AAAAAA==-2"},
		Parts: []PartSum{{Number: 1, Size: 4, Checksum: "AAAAAA=="}, {Number: 3, Size: 6, Checksum: "AAAAAQ=="}}}
	if got, err := DecodeEntry(en.Encode()); err != nil || !reflect.DeepEqual(got, en) {
		t.Fatalf("entry: %+v %v", got, err)
	}
	dm := Entry{MTime: now, Meta: map[string]string{}, Owner: "u", ACL: Private("u"), DeleteMarker: true, Stamp: 5}
	if got, err := DecodeEntry(dm.Encode()); err != nil || !reflect.DeepEqual(got, dm) {
		t.Fatalf("delete marker: %+v %v", got, err)
	}
	// A delete marker with data is corrupt.
	dm.Size, dm.Extents = 1, []Extent{{1, 1}}
	if _, err := DecodeEntry(dm.Encode()); err == nil {
		t.Fatal("a delete marker with data decoded")
	}
	u := User{Name: "u", DisplayName: "U", Keys: []Key{{"A", "S"}}, Created: now}
	if got, err := DecodeUser(u.Encode()); err != nil || !reflect.DeepEqual(got, u) {
		t.Fatalf("user: %+v %v", got, err)
	}
	b := Bucket{Name: "b", Owner: "u", ID: "01", Created: now, Region: "r", ACL: ACL{Grants: []Grant{
		{Kind: GranteeUser, ID: "u", Perm: PermFullControl}, {Kind: GranteeAllUsers, Perm: PermRead}, {Kind: GranteeAuthenticated, Perm: PermWriteACP}}}, Policy: `{"Statement":[]}`, Tags: []Tag{{"k", "v"}},
		CORS: []CORSRule{{ID: "r", AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET", "PUT"}, AllowedHeaders: []string{"x-*"}, MaxAgeSeconds: -1},
			{AllowedOrigins: []string{"https://a"}, AllowedMethods: []string{"HEAD"}, ExposeHeaders: []string{"ETag"}, MaxAgeSeconds: 3000}},
		Versioning: VersioningSuspended, Ownership: OwnershipOwnerEnforced, PublicAccessBlock: &PublicAccessBlock{BlockPublicAcls: true, RestrictPublicBuckets: true},
		Lifecycle: testLifecycle(now)}
	if got, err := DecodeBucket(b.Encode()); err != nil || !reflect.DeepEqual(got, b) {
		t.Fatalf("bucket: %+v %v", got, err)
	}
	b.Versioning = "Sometimes"
	if _, err := DecodeBucket(b.Encode()); err == nil {
		t.Fatal("a bucket of an unknown versioning state decoded")
	}
	up := Upload{Key: "k", ID: "i", Initiated: now, ContentType: "c", Meta: map[string]string{}, Owner: "u", ACL: Private("u"), Tags: []Tag{{"t", "u"}},
		Checksum: Checksum{Algorithm: "CRC64NVME", Type: "FULL_OBJECT"}}
	if got, err := DecodeUpload(up.Encode()); err != nil || !reflect.DeepEqual(got, up) {
		t.Fatalf("upload: %+v %v", got, err)
	}
	p := Part{Number: 3, ETag: "e", Size: 5, ID: 9, MTime: now, Checksum: Checksum{Algorithm: "SHA1", Value: "2jmj7l5rSw0yVb/vlWAYkK/YBwk="}}
	if got, err := DecodePart(p.Encode()); err != nil || got != p {
		t.Fatalf("part: %+v %v", got, err)
	}
	l := LifecycleLease{Holder: "h.1", Until: now, Pass: now.Add(-time.Hour), Marker: "k\x01", Uploads: true}
	if got, err := DecodeLifecycleLease(l.Encode()); err != nil || got != l {
		t.Fatalf("lease: %+v %v", got, err)
	}
	g := Garbage{ID: 7, Size: 8, BucketID: "b", Key: "k", UploadID: "u", Since: now}
	if got, err := DecodeGarbage(g.Encode()); err != nil || got != g {
		t.Fatalf("garbage: %+v %v", got, err)
	}
	// An entry whose extents do not add up to its size is corrupt.
	en.Size = 11
	if _, err := DecodeEntry(en.Encode()); err == nil {
		t.Fatal("an entry of inconsistent size decoded")
	}
}

// FuzzDecode: no record decoder panics, and what decodes re-encodes to a
// record that decodes the same.
func FuzzDecode(f *testing.F) {
	now := time.Unix(1, 0)
	f.Add(Entry{Size: 1, ETag: "e", MTime: now, Extents: []Extent{{1, 1}}}.Encode())
	f.Add(User{Name: "u", Keys: []Key{{"a", "s"}}}.Encode())
	f.Add(Bucket{Name: "b", ACL: Private("u")}.Encode())
	f.Add(v1Bucket("b", "u"))
	f.Add(Upload{Key: "k", Meta: map[string]string{"a": "b"}}.Encode())
	f.Add(Part{Number: 1}.Encode())
	f.Add(Garbage{ID: 1}.Encode())
	f.Add(Entry{Size: 1, ETag: "e", MTime: now, Extents: []Extent{{1, 1}}, Owner: "u", ACL: Private("u"), Tags: []Tag{{"k", "v"}, {"é", ""}}}.Encode())
	f.Add(Bucket{Name: "b", ACL: Private("u"), Tags: []Tag{{"k", "v"}}}.Encode())
	f.Add(Bucket{Name: "b", ACL: Private("u"), Versioning: VersioningEnabled}.Encode())
	f.Add(Entry{MTime: now, DeleteMarker: true, Stamp: 7}.Encode())
	f.Add(Bucket{Name: "b", ACL: Private("u"), CORS: []CORSRule{{ID: "i", AllowedOrigins: []string{"http://*.x"}, AllowedMethods: []string{"GET"}, AllowedHeaders: []string{"*"}, ExposeHeaders: []string{"ETag"}, MaxAgeSeconds: 5}}}.Encode())
	f.Add(Upload{Key: "k", Owner: "u", Tags: []Tag{{"k", "v"}}}.Encode())
	f.Add(Bucket{Name: "b", ACL: Private("u"), Ownership: OwnershipOwnerPreferred, PublicAccessBlock: &PublicAccessBlock{IgnorePublicAcls: true}}.Encode())
	f.Add(Upload{Key: "k", Checksum: Checksum{Algorithm: "SHA256", Type: "COMPOSITE"}}.Encode())
	f.Add(Part{Number: 2, Checksum: Checksum{Algorithm: "CRC32", Value: "AAAAAA=="}}.Encode())
	f.Add(Entry{Size: 2, ETag: "e-2", MTime: now, Extents: []Extent{{1, 1}, {2, 1}}, Checksum: Checksum{Algorithm: "CRC32C", Type: "COMPOSITE", Value: "AAAAAA==-2"},
		Parts: []PartSum{{1, 1, "AAAAAA=="}, {2, 1, "AAAAAQ=="}}}.Encode())
	f.Add(Bucket{Name: "b", ACL: Private("u"), Lifecycle: testLifecycle(now)}.Encode())
	f.Add(LifecycleLease{Holder: "h", Until: now, Pass: now, Marker: "m"}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if l, err := DecodeLifecycleLease(b); err == nil {
			if again, err := DecodeLifecycleLease(l.Encode()); err != nil || again != l {
				t.Fatalf("lease re-encodes differently: %+v %+v %v", l, again, err)
			}
		}
		if en, err := DecodeEntry(b); err == nil {
			if again, err := DecodeEntry(en.Encode()); err != nil || !reflect.DeepEqual(again, en) {
				t.Fatalf("entry re-encodes differently: %+v %+v %v", en, again, err)
			}
		}
		_, _ = DecodeUser(b)
		if bk, err := DecodeBucket(b); err == nil {
			if again, err := DecodeBucket(bk.Encode()); err != nil || !reflect.DeepEqual(again, bk) {
				t.Fatalf("bucket re-encodes differently: %+v %+v %v", bk, again, err)
			}
		}
		if up, err := DecodeUpload(b); err == nil {
			if again, err := DecodeUpload(up.Encode()); err != nil || !reflect.DeepEqual(again, up) {
				t.Fatalf("upload re-encodes differently: %+v %+v %v", up, again, err)
			}
		}
		_, _ = DecodePart(b)
		_, _ = DecodeGarbage(b)
	})
}

// testLifecycle is a lifecycle configuration using every field.
func testLifecycle(now time.Time) []LifecycleRule {
	return []LifecycleRule{
		{ID: "a", Enabled: true, LegacyPrefix: true, Filter: LifecycleFilter{Prefix: "logs/", SizeGreaterThan: -1, SizeLessThan: -1}, ExpirationDays: 3, AbortDays: 7,
			NoncurrentDays: 2, NewerNoncurrentVersions: 5, NoncurrentTransitions: []LifecycleTransition{{Days: 1, StorageClass: "GLACIER", Newer: 2}}},
		{ID: "b", Filter: LifecycleFilter{Prefix: "t/", Tags: []Tag{{"k", "v"}}, SizeGreaterThan: 10, SizeLessThan: 100, And: true}, ExpirationDate: now,
			Transitions: []LifecycleTransition{{Date: now.Add(-24 * time.Hour), StorageClass: "STANDARD_IA"}}},
		{ID: "c", Enabled: true, Filter: LifecycleFilter{SizeGreaterThan: -1, SizeLessThan: -1}, ExpiredObjectDeleteMarker: true, MarkerGiven: true},
	}
}

// v1Bucket is a bucket record as version 1 wrote it (before ACLs).
func v1Bucket(name, owner string) []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(name)
	e.String(owner)
	e.String("00")
	e.Varint(0)
	e.String("us-east-1")
	e.End(mk)
	return e.Data()
}

// Records written before ACLs decode as S3's default: a bucket with its
// owner's FULL_CONTROL, an entry and an upload with no owner (the
// gateway reads that as the bucket's owner, private).
func TestVersion1Records(t *testing.T) {
	b, err := DecodeBucket(v1Bucket("b", "alice"))
	if err != nil || !reflect.DeepEqual(b.ACL, Private("alice")) {
		t.Fatalf("v1 bucket: %+v %v", b, err)
	}
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Varint(1)
	e.String("etag")
	e.Varint(0)
	e.String("")
	e.Uvarint(0)
	e.Uvarint(1)
	e.Uint64(7)
	e.Varint(1)
	e.Bool(false)
	e.End(mk)
	en, err := DecodeEntry(e.Data())
	if err != nil || en.Owner != "" || en.ACL.Grants != nil || en.Size != 1 {
		t.Fatalf("v1 entry: %+v %v", en, err)
	}
	// A grant that names nobody, or a user grant without a name, is corrupt.
	for _, bad := range []ACL{{Grants: []Grant{{Kind: GranteeUser, Perm: PermRead}}}, {Grants: []Grant{{Kind: 9, Perm: PermRead}}},
		{Grants: []Grant{{Kind: GranteeAllUsers, ID: "x", Perm: PermRead}}}, {Grants: []Grant{{Kind: GranteeAllUsers, Perm: 0}}}} {
		if _, err := DecodeBucket(Bucket{Name: "b", ACL: bad}.Encode()); err == nil {
			t.Fatalf("ACL %+v decoded", bad)
		}
	}
}
