package meta

import (
	"context"

	"github.com/cuttlestore/cuttle/encoding"
)

// Object ownership settings (S3's ObjectOwnership).
const (
	OwnershipNone           = "" // no ownership controls: as ObjectWriter
	OwnershipObjectWriter   = "ObjectWriter"
	OwnershipOwnerPreferred = "BucketOwnerPreferred"
	OwnershipOwnerEnforced  = "BucketOwnerEnforced"
)

// PublicAccessBlock is a bucket's public access block configuration.
type PublicAccessBlock struct {
	BlockPublicAcls       bool
	IgnorePublicAcls      bool
	BlockPublicPolicy     bool
	RestrictPublicBuckets bool
}

func encodePublicAccessBlock(e *encoding.Encoder, p *PublicAccessBlock) {
	e.Bool(p != nil)
	if p != nil {
		e.Bool(p.BlockPublicAcls)
		e.Bool(p.IgnorePublicAcls)
		e.Bool(p.BlockPublicPolicy)
		e.Bool(p.RestrictPublicBuckets)
	}
}

func decodePublicAccessBlock(d *encoding.Decoder) *PublicAccessBlock {
	if !d.Bool() {
		return nil
	}
	return &PublicAccessBlock{BlockPublicAcls: d.Bool(), IgnorePublicAcls: d.Bool(), BlockPublicPolicy: d.Bool(), RestrictPublicBuckets: d.Bool()}
}

// SetBucketOwnership replaces the object ownership setting of bucket b
// (OwnershipNone removes the controls).
func (s *Store) SetBucketOwnership(ctx context.Context, b Bucket, ownership string) (Bucket, error) {
	return s.updateBucket(ctx, b, func(cur *Bucket) { cur.Ownership = ownership })
}

// SetBucketPublicAccessBlock replaces the public access block of bucket
// b (nil removes it).
func (s *Store) SetBucketPublicAccessBlock(ctx context.Context, b Bucket, p *PublicAccessBlock) (Bucket, error) {
	return s.updateBucket(ctx, b, func(cur *Bucket) { cur.PublicAccessBlock = p })
}
