package s3gw

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
	"github.com/cuttlestore/cuttle/kv"
	"github.com/cuttlestore/cuttle/rados"
)

// entryOf reads the index entry of bucket/key (its null or latest version).
func (e *env) entryOf(bucket, key string) (meta.Bucket, meta.Entry) {
	e.t.Helper()
	ctx := context.Background()
	b, err := e.gw.Meta().GetBucket(ctx, bucket)
	if err != nil {
		e.t.Fatal(err)
	}
	ix, err := e.gw.Meta().Index(ctx, b)
	if err != nil {
		e.t.Fatal(err)
	}
	vs, err := ix.Versions(ctx, key)
	if err != nil || len(vs) == 0 {
		e.t.Fatalf("versions of %s/%s: %v %v", bucket, key, vs, err)
	}
	return b, vs[len(vs)-1]
}

// Each inconsistency a crash or a bug can leave, made by hand: found by
// the check (every version's data, undecodable keys, leaks over the
// whole pool, garbage records naming live data), and fixed as far as
// asked, after which the collector and the check agree the pool is
// clean.
func TestCheckBuckets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		ctx := context.Background()
		g := e.gw
		hour := DefaultGarbageAge
		check := func(o CheckOptions) CheckReport {
			t.Helper()
			if o.MinIdle == 0 {
				o.MinIdle = hour
			}
			r, err := g.CheckBuckets(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		all := CheckOptions{All: true, Leaks: true}

		e.ok(req{method: "PUT", target: "/ckb"})
		e.ok(req{method: "PUT", target: "/ckb/a", body: []byte("aaaa")})
		e.ok(req{method: "PUT", target: "/ckb/big", body: bytes.Repeat([]byte("b"), 5<<20)})
		e.ok(req{method: "PUT", target: "/ckb/keep", body: []byte("keep me")})
		e.ok(req{method: "PUT", target: "/ckb/empty"})
		e.ok(req{method: "PUT", target: "/ver"})
		e.setVersioning("ver", "Enabled")
		e.ok(req{method: "PUT", target: "/ver/v", body: []byte("first")})
		e.ok(req{method: "PUT", target: "/ver/v", body: []byte("second")})
		e.ok(req{method: "DELETE", target: "/ver/v"}) // a delete marker
		e.ok(req{method: "PUT", target: "/other"})
		e.ok(req{method: "PUT", target: "/other/o", body: []byte("other's")})
		upload := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/ckb/mp?uploads"})).UploadID
		e.ok(req{method: "PUT", target: "/ckb/mp?partNumber=1&uploadId=" + upload, body: []byte("part one")})
		g.Quiesce()

		r := check(all)
		if r.Remaining() != 0 || r.Entries != 8 || r.PoolDataObjects != 8 || r.DataObjects != 8 || r.Uploads != 1 || r.Parts != 1 || r.InFlight != 0 || strings.Join(r.Buckets, ",") != "ckb,other,ver" {
			t.Fatalf("a clean pool: %+v", r)
		}

		// Missing data (a's object), short data (big's second object),
		// and an old version's data missing.
		_, a := e.entryOf("ckb", "a")
		if err := e.io.Delete(ctx, dataObjectName(a.Extents[0].ID, 0)); err != nil {
			t.Fatal(err)
		}
		_, big := e.entryOf("ckb", "big")
		if err := e.io.Truncate(ctx, dataObjectName(big.Extents[0].ID, 1), 100); err != nil {
			t.Fatal(err)
		}
		_, first := e.entryOf("ver", "v") // the oldest version
		if err := e.io.Delete(ctx, dataObjectName(first.Extents[0].ID, 0)); err != nil {
			t.Fatal(err)
		}
		// Data written and never committed nor recorded.
		leak := meta.NewID()
		if _, _, err := g.writeData(ctx, leak, bytes.NewReader(bytes.Repeat([]byte("L"), 4<<20+10)), 4<<20+10, 5<<20); err != nil {
			t.Fatal(err)
		}
		// A garbage record naming keep's live data.
		ckb, keep := e.entryOf("ckb", "keep")
		if err := g.Meta().AddGarbage(ctx, meta.Garbage{ID: keep.Extents[0].ID, Size: keep.Size, BucketID: ckb.ID, Key: "other-key"}); err != nil {
			t.Fatal(err)
		}
		// A key that does not decode.
		raw, err := kv.Open(ctx, e.io, "b."+ckb.ID, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.Put(ctx, "junk", []byte{9, 9, 9}); err != nil {
			t.Fatal(err)
		}

		// Just written, the leak and the record count as in flight.
		r = check(all)
		if r.InFlight != 1 || r.Leaked.Count != 0 || r.LiveGarbage.Count != 0 || r.Missing.Count != 3 || r.Undecodable.Count != 1 {
			t.Fatalf("young: %+v", r)
		}
		time.Sleep(hour + time.Minute)

		r = check(all)
		if r.Missing.Count != 3 || r.Leaked.Count != 1 || r.LiveGarbage.Count != 1 || r.Undecodable.Count != 1 || r.Remaining() != 6 || r.InFlight != 0 {
			t.Fatalf("every kind: %+v", r)
		}
		want := map[string]string{"a": "s3.d.", "big": "is 100 bytes, the extent needs 1048576", "v": "is missing"}
		for _, p := range r.Missing.Examples {
			if w, ok := want[p.Key]; !ok || !strings.Contains(p.Detail, w) {
				t.Errorf("missing data example: %+v", p)
			}
			delete(want, p.Key)
		}
		if p := r.Leaked.Examples[0]; p.Data != fmt.Sprintf("%016x", leak) || !strings.Contains(p.Detail, "2 object(s), 4194314 bytes") {
			t.Errorf("leak: %+v", p)
		}
		if p := r.Undecodable.Examples[0]; p.Bucket != "ckb" || p.Key != `"junk"` || !strings.Contains(p.Detail, "corrupt") {
			t.Errorf("undecodable: %+v", p)
		}
		if p := r.LiveGarbage.Examples[0]; p.Bucket != "ckb" || p.Key != "other-key" {
			t.Errorf("live garbage: %+v", p)
		}

		// One bucket: its own entries; leaks are the pool's (other's
		// data is named by other's index, read though not checked).
		r = check(CheckOptions{Buckets: []string{"ckb"}, Leaks: true})
		if r.Missing.Count != 2 || r.Leaked.Count != 1 || r.LiveGarbage.Count != 1 || r.Undecodable.Count != 1 || r.Entries != 5 {
			t.Fatalf("bucket ck: %+v", r)
		}
		r = check(CheckOptions{Buckets: []string{"other"}})
		if r.Remaining() != 0 || r.LeaksChecked || r.Entries != 1 {
			t.Fatalf("bucket other without the leak scan: %+v", r)
		}

		// --fix: the live data's record dropped; the leak kept while a
		// key does not decode (it might name the leaked data), then
		// recorded; the broken entries stay, so problems remain.
		r = check(CheckOptions{All: true, Leaks: true, Fix: true})
		if r.Leaked.Fixed != 0 || !strings.Contains(r.LeaksKept, "1 index key(s) do not decode") || r.LiveGarbage.Fixed != 1 || r.Remaining() != 5 {
			t.Fatalf("fix with a key that does not decode: %+v", r)
		}
		if err := raw.Remove(ctx, "junk"); err != nil {
			t.Fatal(err)
		}
		r = check(CheckOptions{All: true, Leaks: true, Fix: true})
		if r.Leaked.Fixed != 1 || r.LiveGarbage.Count != 0 || r.Missing.Fixed != 0 || r.Remaining() != 3 || !r.Leaked.Examples[0].Fixed || r.LeaksKept != "" {
			t.Fatalf("fix: %+v", r)
		}
		if res, err := g.CollectGarbage(ctx, hour); err != nil || res != (GCResult{Removed: 1}) {
			t.Fatalf("collect the leak: %+v %v", res, err)
		}
		if w := e.ok(req{method: "GET", target: "/ckb/keep"}); w.Body.String() != "keep me" {
			t.Fatalf("keep: %q", w.Body.String())
		}

		// --fix --remove-broken: the broken entries go, their data on
		// the garbage list; a's object reads 404, ver/v's other version
		// stays.
		r = check(CheckOptions{All: true, Leaks: true, Fix: true, RemoveBroken: true})
		if r.Missing.Count != 3 || r.Missing.Fixed != 3 || r.Leaked.Count != 0 || r.Remaining() != 0 || !r.Missing.Examples[0].Fixed {
			t.Fatalf("remove broken: %+v", r)
		}
		e.want(e.do(req{method: "GET", target: "/ckb/a"}), 404, "NoSuchKey")
		if vs := e.versions("ver", ""); vs.String() != "v@DM* v@"+etagOf("second") {
			t.Fatalf("ver's versions: %+v", vs)
		}
		if res, err := g.CollectGarbage(ctx, 0); err != nil || res.Removed != 3 {
			t.Fatalf("collect the broken entries' data: %+v %v", res, err)
		}
		r = check(all)
		if r.Remaining() != 0 || r.PoolDataObjects != 4 || r.GarbageRecords != 0 {
			t.Fatalf("after the fixes: %+v", r)
		}
		if d, gr := e.dataObjects(); d != 4 || gr != 0 {
			t.Fatalf("%d data objects, %d records", d, gr)
		}
	})
}

// A part of an upload in progress whose data went: reported with its
// upload (no fix: the client uploads it again, or aborts), and clean
// once uploaded again.
func TestCheckParts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		ctx := context.Background()
		e.ok(req{method: "PUT", target: "/pck"})
		id := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/pck/obj?uploads"})).UploadID
		e.ok(req{method: "PUT", target: "/pck/obj?partNumber=1&uploadId=" + id, body: bytes.Repeat([]byte("1"), 5<<20)})
		e.ok(req{method: "PUT", target: "/pck/obj?partNumber=2&uploadId=" + id, body: []byte("two")})
		parts, err := e.gw.Meta().AllParts(ctx, id)
		if err != nil || len(parts) != 2 {
			t.Fatal(parts, err)
		}
		if err := e.io.Delete(ctx, dataObjectName(parts[1].ID, 0)); err != nil {
			t.Fatal(err)
		}
		e.gw.Quiesce()
		r, err := e.gw.CheckBuckets(ctx, CheckOptions{Buckets: []string{"pck"}, Leaks: true, MinIdle: time.Hour, Fix: true, RemoveBroken: true})
		if err != nil || r.Uploads != 1 || r.Parts != 2 || r.DataObjects != 3 || r.BrokenParts.Count != 1 || r.Remaining() != 1 {
			t.Fatalf("a part's data deleted: %+v %v", r, err)
		}
		if p := r.BrokenParts.Examples[0]; p.Upload != id || p.Key != "obj" || p.Data != fmt.Sprintf("%016x", parts[1].ID) || !strings.HasPrefix(p.Detail, "part 2: object s3.d.") {
			t.Errorf("broken part: %+v", p)
		}
		e.ok(req{method: "PUT", target: "/pck/obj?partNumber=2&uploadId=" + id, body: []byte("two")})
		e.gw.Quiesce()
		if r, err := e.gw.CheckBuckets(ctx, CheckOptions{Buckets: []string{"pck"}, Leaks: true, MinIdle: time.Hour}); err != nil || r.Remaining() != 0 || r.Parts != 2 {
			t.Fatalf("the part uploaded again: %+v %v", r, err)
		}
	})
}

// A gateway killed inside CompleteMultipartUpload after its index write
// and before forgetting the upload (the state is made by putting the
// upload's records back after a complete): the check finds the pool
// clean (the parts' data are the object's), an abort of the leftover
// upload keeps the data the object names, in an unversioned bucket and
// in a versioned one alike, and after a collection the check is clean
// and the object reads whole.
func TestCheckAfterCompleteKilled(t *testing.T) {
	for _, versioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("versioned=%v", versioned), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				ctx := context.Background()
				e.ok(req{method: "PUT", target: "/mpk"})
				if versioned {
					e.setVersioning("mpk", "Enabled")
				}
				id := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/mpk/obj?uploads"})).UploadID
				p1 := bytes.Repeat([]byte("1"), 5<<20)
				e1 := e.ok(req{method: "PUT", target: "/mpk/obj?partNumber=1&uploadId=" + id, body: p1}).Header().Get("ETag")
				e2 := e.ok(req{method: "PUT", target: "/mpk/obj?partNumber=2&uploadId=" + id, body: []byte("two")}).Header().Get("ETag")
				e.ok(req{method: "PUT", target: "/mpk/obj?partNumber=3&uploadId=" + id, body: []byte("unused")})
				b, err := e.gw.Meta().GetBucket(ctx, "mpk")
				if err != nil {
					t.Fatal(err)
				}
				uploads, _, err := e.io.GetOmapValues(ctx, "s3.uploads."+b.ID, "", "", 10)
				if err != nil || len(uploads) != 1 {
					t.Fatal(uploads, err)
				}
				parts, _, err := e.io.GetOmapValues(ctx, "s3.parts."+id, "", "", 10)
				if err != nil || len(parts) != 3 {
					t.Fatal(parts, err)
				}
				e.ok(req{method: "POST", target: "/mpk/obj?uploadId=" + id, body: completeBody("1", e1, "2", e2)})
				e.gw.Quiesce()
				put := func(obj string, kvs []rados.KeyValue) {
					m := map[string][]byte{}
					for _, p := range kvs {
						m[p.Key] = p.Value
					}
					if err := e.io.SetOmap(ctx, obj, m); err != nil {
						t.Fatal(err)
					}
				}
				put("s3.uploads."+b.ID, uploads)
				put("s3.parts."+id, parts[:2]) // part 3 went to the garbage list and was removed

				r, err := e.gw.CheckBuckets(ctx, CheckOptions{All: true, Leaks: true})
				if err != nil || r.Remaining() != 0 || r.PoolDataObjects != 3 {
					t.Fatalf("check after the kill: %+v %v", r, err)
				}
				e.want(e.ok(req{method: "DELETE", target: "/mpk/obj?uploadId=" + id}), 204, "")
				time.Sleep(2 * DefaultGarbageAge)
				if _, err := e.gw.CollectGarbage(ctx, DefaultGarbageAge); err != nil {
					t.Fatal(err)
				}
				r, err = e.gw.CheckBuckets(ctx, CheckOptions{All: true, Leaks: true, MinIdle: DefaultGarbageAge})
				if err != nil || r.Remaining() != 0 || r.PoolDataObjects != 3 || r.GarbageRecords != 0 || r.DataObjects != 3 {
					t.Fatalf("check after the abort: %+v %v", r, err)
				}
				if w := e.ok(req{method: "GET", target: "/mpk/obj"}); !bytes.Equal(w.Body.Bytes(), append(p1, "two"...)) {
					t.Fatalf("the object reads %d bytes", w.Body.Len())
				}
			})
		})
	}
}

// FuzzDataObjectName: the names a pool listing gives never panic the
// parser, which accepts exactly the names dataObjectName makes.
func FuzzDataObjectName(f *testing.F) {
	f.Add("s3.d.00000000deadbeef.00000001", uint64(1), uint32(2))
	f.Add("s3.d.00000000deadbeef.0000000", uint64(0), uint32(0))
	f.Add("s3.d.+0000000deadbeef.00000001", uint64(1<<63), uint32(1<<31))
	f.Add("s3.d.00000000DEADBEEF.00000001", uint64(7), uint32(0))
	f.Add("s3.bucket.x", uint64(0), uint32(0))
	f.Fuzz(func(t *testing.T, name string, id uint64, no uint32) {
		if gid, gno, ok := parseDataObject(name); ok && dataObjectName(gid, gno) != name {
			t.Fatalf("%q parsed as %x.%x", name, gid, gno)
		}
		if gid, gno, ok := parseDataObject(dataObjectName(id, uint64(no))); !ok || gid != id || gno != uint64(no) {
			t.Fatalf("%s parsed as %x.%x %v", dataObjectName(id, uint64(no)), gid, gno, ok)
		}
	})
}
