package meta

import (
	"reflect"
	"testing"
	"time"
)

func TestRoundTrips(t *testing.T) {
	now := time.Unix(1700000000, 123).UTC()
	en := Entry{Size: 10, ETag: "abc-2", MTime: now, ContentType: "text/plain", Meta: map[string]string{"x-amz-meta-a": "1"}, Extents: []Extent{{1, 4}, {2, 6}}}
	if got, err := DecodeEntry(en.Encode()); err != nil || !reflect.DeepEqual(got, en) {
		t.Fatalf("entry: %+v %v", got, err)
	}
	u := User{Name: "u", DisplayName: "U", Keys: []Key{{"A", "S"}}, Created: now}
	if got, err := DecodeUser(u.Encode()); err != nil || !reflect.DeepEqual(got, u) {
		t.Fatalf("user: %+v %v", got, err)
	}
	b := Bucket{Name: "b", Owner: "u", ID: "01", Created: now, Region: "r"}
	if got, err := DecodeBucket(b.Encode()); err != nil || got != b {
		t.Fatalf("bucket: %+v %v", got, err)
	}
	up := Upload{Key: "k", ID: "i", Initiated: now, ContentType: "c", Meta: map[string]string{}}
	if got, err := DecodeUpload(up.Encode()); err != nil || !reflect.DeepEqual(got, up) {
		t.Fatalf("upload: %+v %v", got, err)
	}
	p := Part{Number: 3, ETag: "e", Size: 5, ID: 9, MTime: now}
	if got, err := DecodePart(p.Encode()); err != nil || got != p {
		t.Fatalf("part: %+v %v", got, err)
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
	f.Add(Bucket{Name: "b"}.Encode())
	f.Add(Upload{Key: "k", Meta: map[string]string{"a": "b"}}.Encode())
	f.Add(Part{Number: 1}.Encode())
	f.Add(Garbage{ID: 1}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if en, err := DecodeEntry(b); err == nil {
			if again, err := DecodeEntry(en.Encode()); err != nil || !reflect.DeepEqual(again, en) {
				t.Fatalf("entry re-encodes differently: %+v %+v %v", en, again, err)
			}
		}
		_, _ = DecodeUser(b)
		_, _ = DecodeBucket(b)
		_, _ = DecodeUpload(b)
		_, _ = DecodePart(b)
		_, _ = DecodeGarbage(b)
	})
}
