package meta

import (
	"fmt"

	"github.com/cuttlestore/cuttle/encoding"
)

// Tag is one key-value pair of an object's or a bucket's tag set.
type Tag struct {
	Key, Value string
}

// Bounds of a stored tag set: S3's limits (50 tags on a bucket, 10 on an
// object; keys of 128 characters, values of 256), in bytes of UTF-8.
const (
	maxTags     = 50
	maxTagKey   = 128 * 4
	maxTagValue = 256 * 4
)

func encodeTags(e *encoding.Encoder, tags []Tag) {
	e.Uvarint(uint64(len(tags)))
	for _, t := range tags {
		e.String(t.Key)
		e.String(t.Value)
	}
}

// decodeTags reads a tag set; none decodes as nil.
func decodeTags(d *encoding.Decoder) []Tag {
	n := d.Count(2)
	if n > maxTags {
		d.Fail(fmt.Errorf("%d tags", n))
		return nil
	}
	var tags []Tag
	for i := 0; i < n && d.Err() == nil; i++ {
		tags = append(tags, Tag{Key: d.String(maxTagKey), Value: d.String(maxTagValue)})
	}
	return tags
}
