package meta

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/kv"
)

// A bucket of several index leaves emptied key by key (the kv store
// rebalances and merges its leaves): reads, listings and the emptiness
// check follow, and a deleted bucket leaves no index object.
func TestDeleteManyKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 9, MinDelay: 100 * time.Microsecond, MaxDelay: 200 * time.Microsecond}})
		for _, h := range []string{"h1", "h2", "h3"} {
			c.AddOSD(h)
		}
		c.Run("osd pool create", "pool", "s3", "pg_num", "8", "size", "3")
		c.WaitForEpoch(c.Epoch())
		io, err := c.Client("client.t").OpenIOContext("s3")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		s := NewStore(io, kv.Config{}, nil)
		if _, err := s.CreateUser(ctx, "u", ""); err != nil {
			t.Fatal(err)
		}
		b, err := s.CreateBucket(ctx, "tomb", "u", "r", Private("u"))
		if err != nil {
			t.Fatal(err)
		}
		ix, err := s.Index(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		const n = 1000 // more than 2k = 800: at least two leaves
		for i := range n {
			if err := ix.Put(ctx, fmt.Sprintf("k%04d", i), Entry{ETag: "e"}); err != nil {
				t.Fatal(err)
			}
		}
		if len(ix.kv.Leaves()) < 2 {
			t.Fatalf("%d leaves", len(ix.kv.Leaves()))
		}
		// Remove all but the last key.
		for i := range n - 1 {
			if err := ix.Delete(ctx, fmt.Sprintf("k%04d", i)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ix.Get(ctx, "k0000"); !errors.Is(err, ErrNoSuchObject) {
			t.Fatalf("get of a removed key: %v", err)
		}
		got, more, err := ix.List(ctx, "", "", 10)
		if err != nil || more || len(got) != 1 || got[0].Key != fmt.Sprintf("k%04d", n-1) {
			t.Fatalf("list after the removes: %v %v %v", got, more, err)
		}
		if err := s.DeleteBucket(ctx, b); !errors.Is(err, ErrBucketNotEmpty) {
			t.Fatalf("delete a bucket with one object: %v", err)
		}
		if err := ix.Delete(ctx, fmt.Sprintf("k%04d", n-1)); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteBucket(ctx, b); err != nil {
			t.Fatalf("delete the emptied bucket: %v", err)
		}
		for o, err := range io.Objects(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if o.Name != "s3.users" && o.Name != "s3.user.u" && o.Name != "s3.key."+mustKey(t, s) {
				t.Errorf("object %s left after the bucket's deletion", o.Name)
			}
		}
	})
}

func mustKey(t *testing.T, s *Store) string {
	u, err := s.GetUser(context.Background(), "u")
	if err != nil || len(u.Keys) != 1 {
		t.Fatal(u, err)
	}
	return u.Keys[0].Access
}
