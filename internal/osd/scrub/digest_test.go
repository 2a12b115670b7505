package scrub

import (
	"hash/crc32"
	"testing"
)

func crc32c(s string) uint32 { return crc32.Checksum([]byte(s), crc32.MakeTable(crc32.Castagnoli)) }

// The digests' framing is part of the scrub map's format: members of
// different versions compare them.
func TestDigestFormat(t *testing.T) {
	attrs := map[string][]byte{"b": []byte("xy"), "_": []byte("info"), "a": nil}
	if got, want := AttrsDigest(attrs), crc32c("1:_4:info1:a0:1:b2:xy"); got != want {
		t.Errorf("AttrsDigest = %08x, want %08x", got, want)
	}
	if got, want := AttrsDigest(nil), crc32c(""); got != want {
		t.Errorf("AttrsDigest(nil) = %08x, want %08x", got, want)
	}
	d := NewOmapDigest([]byte("hdr"))
	d.Add("k1", []byte("v1"))
	d.Add("k2", nil)
	if got, want := d.Sum32(), crc32c("3:hdr2:k12:v12:k20:"); got != want {
		t.Errorf("OmapDigest = %08x, want %08x", got, want)
	}
	if got, want := NewOmapDigest(nil).Sum32(), crc32c("0:"); got != want {
		t.Errorf("empty OmapDigest = %08x, want %08x", got, want)
	}
	if got, want := DataDigest([]byte("data")), crc32c("data"); got != want {
		t.Errorf("DataDigest = %08x, want %08x", got, want)
	}
}

// Moving bytes between a name and its value, or between entries, changes
// the digest.
func TestDigestFraming(t *testing.T) {
	pairs := [][2]map[string][]byte{
		{{"ab": []byte("c")}, {"a": []byte("bc")}},
		{{"a": []byte("1"), "b": nil}, {"a": nil, "b": []byte("1")}},
		{{"a": nil}, {}},
	}
	for _, p := range pairs {
		if AttrsDigest(p[0]) == AttrsDigest(p[1]) {
			t.Errorf("%q and %q digest alike", p[0], p[1])
		}
	}
	x, y := NewOmapDigest([]byte("k")), NewOmapDigest(nil)
	y.Add("k", nil)
	if x.Sum32() == y.Sum32() {
		t.Error("a header and a key of the same bytes digest alike")
	}
}
