package meta

import (
	"context"
	"fmt"
)

// Walk calls fn with every key of the index from start on, in key
// order: the object name and version id it holds (VersionKey's
// parts), what is stored, and the error decoding it, if it does not
// decode or its version id is malformed (st then holds only the raw
// bytes, enough for RemoveVersion). Tombstones are passed too, marked
// by st.Entry.Deleted. fn returns true to stop. Unlike Scan, a bad
// entry does not end the walk: it is how `cuttle s3 bucket check`
// names the keys that do not decode.
func (ix *Index) Walk(ctx context.Context, start string, fn func(name, id string, st Stored, err error) (stop bool)) error {
	for {
		pairs, more, err := ix.kv.List(ctx, start, "", scanBatch)
		if err != nil {
			return fmt.Errorf("index walk from %q: %w", start, err)
		}
		for _, p := range pairs {
			name, id := splitVersionKey(p.Key)
			st := Stored{raw: p.Value}
			en, derr := DecodeEntry(p.Value)
			if derr == nil && len(name) < len(p.Key) && (id == NullVersion || !ValidVersionID(id)) {
				derr = fmt.Errorf("%w: version id %q is malformed", ErrCorrupt, id)
			}
			if derr == nil {
				en.VersionID = id
				st.Entry, st.Live = en, !en.Deleted
			}
			if fn(name, id, st, derr) {
				return nil
			}
		}
		if !more || len(pairs) == 0 {
			return nil
		}
		start = pairs[len(pairs)-1].Key + "\x00"
	}
}
