package kv

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	clskv "github.com/cuttlestore/cuttle/internal/cls/kv"
)

// The entries of a frozen leaf come from the freeze's reply alone when
// it holds them all; from the reply and then the leaf when the reply was
// bounded (More); and from the leaf alone when an older class answered
// the Leaf without entries.
func TestFrozenEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := fullStore(t, Config{}) // a b c d in one leaf, k 2
		ctx := context.Background()
		leaf := a.Leaves()[0].Leaf
		out, err := a.freeze(ctx, leaf, "test.1")
		if err != nil {
			t.Fatal(err)
		}
		r, err := clskv.DecodeFreezeReply(out)
		if err != nil || !r.Entries || r.More || len(r.Pairs) != 4 || r.Leaf.Frozen != "test.1" {
			t.Fatalf("freeze: %+v, %v", r, err)
		}
		want := []string{"a", "b", "c", "d"}
		for _, tt := range []struct {
			name  string
			reply clskv.FreezeReply
		}{
			{"whole", r},
			{"bounded", clskv.FreezeReply{Leaf: r.Leaf, Entries: true, Pairs: r.Pairs[:1], More: true}},
			{"bounded, none in the reply", clskv.FreezeReply{Leaf: r.Leaf, Entries: true, More: true}},
			{"an older class", clskv.FreezeReply{Leaf: r.Leaf}},
		} {
			ps, err := a.frozenEntries(ctx, leaf, tt.reply)
			var got []string
			for _, p := range ps {
				if string(p.Value) != "A" {
					t.Fatalf("%s: %q = %q", tt.name, p.Key, p.Value)
				}
				got = append(got, p.Key)
			}
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("%s: %q, %v; want %q", tt.name, got, err, want)
			}
		}
	})
}
