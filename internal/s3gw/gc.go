package s3gw

import (
	"context"
	"errors"
	"time"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// DefaultGarbageAge is how old a garbage record must be before the
// collector looks at it: older than any upload still writing its data.
const DefaultGarbageAge = time.Hour

// GCResult is what one collection did.
type GCResult struct {
	// Removed counts data removed; Kept, records whose data an index
	// entry or an upload's part names after all (a crash between the
	// commit and the record's drop); Young, records left for later.
	Removed, Kept, Young int
}

// CollectGarbage goes through the garbage list: the data of each record
// older than minAge that no index entry and no upload in progress names
// is removed, and the record dropped. What a crash left half done
// (data written but never committed, replaced data not yet removed) is
// found here, as every write records its data before it writes them.
func (g *Gateway) CollectGarbage(ctx context.Context, minAge time.Duration) (GCResult, error) {
	var res GCResult
	cutoff := g.now().Add(-minAge)
	for shard := range meta.GCShards {
		if err := g.collectShard(ctx, shard, cutoff, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (g *Gateway) collectShard(ctx context.Context, shard int, cutoff time.Time, res *GCResult) error {
	var after uint64
	for {
		gs, more, err := g.meta.Garbage(ctx, shard, after, 100)
		if err != nil {
			return err
		}
		for _, r := range gs {
			after = r.ID
			if r.Since.After(cutoff) {
				res.Young++
				continue
			}
			used, err := g.inUse(ctx, r)
			if err != nil {
				return err
			}
			if !used {
				if err := g.removeData(ctx, meta.Extent{ID: r.ID, Size: r.Size}); err != nil {
					return err
				}
				res.Removed++
			} else {
				res.Kept++
			}
			if err := g.meta.DropGarbage(ctx, r.ID); err != nil {
				return err
			}
		}
		if !more || len(gs) == 0 {
			return nil
		}
	}
}

// inUse says whether a garbage record's data are named by its object's
// index entry or by a part of its upload.
func (g *Gateway) inUse(ctx context.Context, r meta.Garbage) (bool, error) {
	if r.Key != "" {
		ix, ok, err := g.meta.IndexByID(ctx, r.BucketID)
		if err != nil {
			return false, err
		}
		if ok {
			vs, err := ix.Versions(ctx, r.Key)
			if err != nil {
				return false, err
			}
			for _, en := range vs {
				for _, x := range en.Extents {
					if x.ID == r.ID {
						return true, nil
					}
				}
			}
		}
	}
	if r.UploadID != "" {
		parts, err := g.meta.AllParts(ctx, r.UploadID)
		if err != nil && !errors.Is(err, meta.ErrNoSuchUpload) {
			return false, err
		}
		for _, p := range parts {
			if p.ID == r.ID {
				return true, nil
			}
		}
	}
	return false, nil
}
