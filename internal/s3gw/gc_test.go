package s3gw

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// What a gateway that died mid-write leaves is collected, and nothing
// an index entry or an upload names is touched.
func TestCollectGarbage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		ctx := context.Background()
		e.ok(req{method: "PUT", target: "/gcb"})
		e.ok(req{method: "PUT", target: "/gcb/live", body: []byte("live data")})
		b, err := e.gw.Meta().GetBucket(ctx, "gcb")
		if err != nil {
			t.Fatal(err)
		}
		ix, err := e.gw.Meta().Index(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		live, err := ix.Get(ctx, "live")
		if err != nil {
			t.Fatal(err)
		}
		// A PUT that died after writing its data (record, data, no entry).
		orphan := meta.NewID()
		if err := e.gw.Meta().AddGarbage(ctx, meta.Garbage{ID: orphan, Size: 5, BucketID: b.ID, Key: "never"}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.gw.writeData(ctx, orphan, bytes.NewReader([]byte("lost!")), 5, 5); err != nil {
			t.Fatal(err)
		}
		// A PUT that died after its commit, before dropping its record.
		if err := e.gw.Meta().AddGarbage(ctx, meta.Garbage{ID: live.Extents[0].ID, Size: live.Size, BucketID: b.ID, Key: "live"}); err != nil {
			t.Fatal(err)
		}
		// A part of an upload in progress, recorded.
		id := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/gcb/mp?uploads"})).UploadID
		e.ok(req{method: "PUT", target: "/gcb/mp?partNumber=1&uploadId=" + id, body: []byte("part")})
		parts, err := e.gw.Meta().AllParts(ctx, id)
		if err != nil || len(parts) != 1 {
			t.Fatal(parts, err)
		}
		if err := e.gw.Meta().AddGarbage(ctx, meta.Garbage{ID: parts[0].ID, Size: parts[0].Size, BucketID: b.ID, Key: "mp", UploadID: id}); err != nil {
			t.Fatal(err)
		}
		if d, g := e.dataObjects(); d != 3 || g != 3 {
			t.Fatalf("before: %d data objects, %d records", d, g)
		}
		res, err := e.gw.CollectGarbage(ctx, time.Minute)
		if err != nil || res != (GCResult{Young: 3}) {
			t.Fatalf("young records: %+v %v", res, err)
		}
		time.Sleep(2 * time.Minute)
		res, err = e.gw.CollectGarbage(ctx, time.Minute)
		if err != nil || res != (GCResult{Removed: 1, Kept: 2}) {
			t.Fatalf("collect: %+v %v", res, err)
		}
		if d, g := e.dataObjects(); d != 2 || g != 0 {
			t.Fatalf("after: %d data objects, %d records; want 2 and 0", d, g)
		}
		if w := e.ok(req{method: "GET", target: "/gcb/live"}); w.Body.String() != "live data" {
			t.Fatalf("live object: %q", w.Body.String())
		}
		if _, err := e.gw.Meta().AllParts(ctx, id); errors.Is(err, meta.ErrNoSuchUpload) {
			t.Fatal("the upload went")
		}
	})
}
