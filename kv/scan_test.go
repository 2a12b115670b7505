package kv_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/cuttlestore/cuttle/kv"
)

// modelList is List on a model map.
func modelList(model map[string]string, start, end string, limit int) ([]kv.Pair, bool) {
	var keys []string
	for k := range model {
		if k >= start && (end == "" || k < end) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	more := len(keys) > limit
	if more {
		keys = keys[:limit]
	}
	var ps []kv.Pair
	for _, k := range keys {
		ps = append(ps, kv.Pair{Key: k, Value: []byte(model[k])})
	}
	return ps, more
}

func samePairs(a, b []kv.Pair) bool {
	return slices.EqualFunc(a, b, func(x, y kv.Pair) bool { return x.Key == y.Key && string(x.Value) == string(y.Value) })
}

// listAll pages through [start, end) with List, limit at a time.
func listAll(t *testing.T, s *kv.Store, start, end string, limit int) []kv.Pair {
	t.Helper()
	var all []kv.Pair
	for {
		page, more, err := s.List(context.Background(), start, end, limit)
		if err != nil {
			t.Fatalf("list %q..%q limit %d: %v", start, end, limit, err)
		}
		all = append(all, page...)
		if !more {
			return all
		}
		if len(page) == 0 {
			t.Fatalf("list %q..%q: an empty page with more", start, end)
		}
		start = page[len(page)-1].Key + "\x00"
	}
}

// Ranges, limits and paging on a store of dozens of leaves against a
// model: the pairs, their order and the more flag.
func TestListAgainstModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		s, err := kv.Create(ctx, ioctx(t, c, "client.kv"), "store", kv.Options{K: 3}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		model := map[string]string{}
		// The only leaf, empty.
		if ps, more, err := s.List(ctx, "", "", 10); err != nil || len(ps) != 0 || more {
			t.Fatalf("list of an empty store: %v %v %v", ps, more, err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range 150 {
			key := fmt.Sprintf("k%03d", rng.IntN(300))
			if err := s.Put(ctx, key, fmt.Appendf(nil, "v%d", i)); err != nil {
				t.Fatal(err)
			}
			model[key] = fmt.Sprintf("v%d", i)
		}
		if n := len(s.Leaves()); n < 10 {
			t.Fatalf("%d leaves", n)
		}
		cases := []struct {
			start, end string
			limit      int
		}{
			{"", "", 1}, {"", "", 1000}, {"", "", len(model)}, {"", "", len(model) - 1},
			{"k1", "k2", 1000}, {"k1", "k2", 3}, {"k150", "k150", 5}, {"k2", "k1", 5},
			{"k299\x00", "", 5}, {"a", "b", 5}, {"z", "", 5}, {"", "k000\x00", 5},
		}
		for range 200 {
			start := fmt.Sprintf("k%03d", rng.IntN(320))
			end := fmt.Sprintf("k%03d", rng.IntN(320))
			if rng.IntN(4) == 0 {
				end = ""
			}
			cases = append(cases, struct {
				start, end string
				limit      int
			}{start, end, 1 + rng.IntN(20)})
		}
		for _, tc := range cases {
			got, more, err := s.List(ctx, tc.start, tc.end, tc.limit)
			if err != nil {
				t.Fatalf("list %q..%q limit %d: %v", tc.start, tc.end, tc.limit, err)
			}
			want, wantMore := modelList(model, tc.start, tc.end, tc.limit)
			if !samePairs(got, want) || more != wantMore {
				t.Fatalf("list %q..%q limit %d: %v more %v; want %v more %v", tc.start, tc.end, tc.limit, got, more, want, wantMore)
			}
		}
		for _, limit := range []int{1, 2, 3, 5, 7, 600} {
			want, _ := modelList(model, "", "", len(model))
			if got := listAll(t, s, "", "", limit); !samePairs(got, want) {
				t.Fatalf("paging by %d: %d pairs, want %d", limit, len(got), len(want))
			}
		}
		if _, _, err := s.List(ctx, "", "", 0); !errors.Is(err, kv.ErrInvalid) {
			t.Fatalf("limit 0: %v", err)
		}
	})
}

// A continuation after a key of the longest length (it + "\x00", one
// byte over the limit) resumes after it.
func TestListAfterLongestKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		s, err := kv.Create(ctx, ioctx(t, c, "client.kv"), "store", kv.Options{K: 2}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("m", kv.MaxKeyLen)
		keys := []string{"a", "m", long, long[:kv.MaxKeyLen-1] + "n", "z"}
		for _, k := range keys {
			if err := s.Put(ctx, k, []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		ps, more, err := s.List(ctx, long+"\x00", "", 10)
		if err != nil || more || len(ps) != 2 || ps[0].Key != keys[3] || ps[1].Key != "z" {
			t.Fatalf("list after the longest key: %d pairs, %v, %v", len(ps), more, err)
		}
		if _, _, err := s.List(ctx, long+"\x00\x00", "", 10); !errors.Is(err, kv.ErrInvalid) {
			t.Fatalf("a start of %d bytes: %v", kv.MaxKeyLen+2, err)
		}
	})
}

// Between every page of a scan, another client inserts keys right after
// the scan's position, splitting the leaf the next page starts in (and
// the scanner's index cache goes stale): the scan returns every key
// there was when it began and every key inserted ahead of it, each once
// and in order.
func TestListAcrossSplitsBetweenPages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		w, err := kv.Create(ctx, ioctx(t, c, "client.w"), "store", kv.Options{K: 2}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for i := range 40 {
			key := fmt.Sprintf("k%03d", i*10)
			if err := w.Put(ctx, key, []byte("v")); err != nil {
				t.Fatal(err)
			}
			want[key] = true
		}
		r, err := kv.Open(ctx, ioctx(t, c, "client.r"), "store", kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		leaves := len(w.Leaves())
		var got []string
		start := ""
		inserted := 0
		for {
			page, more, err := r.List(ctx, start, "", 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range page {
				got = append(got, p.Key)
			}
			if !more {
				break
			}
			last := page[len(page)-1].Key
			start = last + "\x00"
			// Five keys just ahead of the position (after every key
			// inserted before them, before the next original key): a
			// split of the leaf holding it (k 2: at most four entries).
			for range 5 {
				if inserted == 150 { // the scan must end
					break
				}
				inserted++
				key := fmt.Sprintf("%s.%04d", last[:4], inserted)
				if err := w.Put(ctx, key, []byte("v")); err != nil {
					t.Fatal(err)
				}
				want[key] = true
			}
		}
		if n := len(w.Leaves()); n < leaves+10 {
			t.Fatalf("%d leaves before the scan, %d after: too few splits to test", leaves, n)
		}
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("the scan is out of order or repeats a key: %v", got)
		}
		for _, k := range got {
			if !want[k] {
				t.Fatalf("the scan returned %q, never written", k)
			}
			delete(want, k)
		}
		if len(want) != 0 {
			t.Fatalf("the scan missed %d keys: %v", len(want), want)
		}
	})
}

// Scanners page through the store while writers insert into it
// concurrently, splitting leaves under the scans (within a page as well
// as between pages): every scan sees each key that existed before it
// began exactly once, in order, and nothing that was never written.
func TestListDuringConcurrentSplits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cluster(t)
		ctx := context.Background()
		s, err := kv.Create(ctx, ioctx(t, c, "client.admin"), "store", kv.Options{K: 3}, kv.Config{})
		if err != nil {
			t.Fatal(err)
		}
		before := map[string]bool{}
		for i := range 60 {
			key := fmt.Sprintf("k%03d", i*5)
			if err := s.Put(ctx, key, []byte("v")); err != nil {
				t.Fatal(err)
			}
			before[key] = true
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		written := make([]map[string]bool, 2)
		for wi := range written {
			written[wi] = map[string]bool{}
			ws, err := kv.Open(ctx, ioctx(t, c, fmt.Sprintf("client.w%d", wi)), "store", kv.Config{Retries: 100})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				for i := range 120 {
					key := fmt.Sprintf("k%03d.%d.%d", (i*7)%300, wi, i)
					if err := ws.Put(ctx, key, []byte("w")); err != nil {
						errs <- err
						return
					}
					written[wi][key] = true
				}
			})
		}
		scans := make([][]string, 3)
		for si := range scans {
			rs, err := kv.Open(ctx, ioctx(t, c, fmt.Sprintf("client.r%d", si)), "store", kv.Config{Retries: 100})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				start := ""
				for {
					page, more, err := rs.List(ctx, start, "", 4+si*7)
					if err != nil {
						errs <- err
						return
					}
					for _, p := range page {
						scans[si] = append(scans[si], p.Key)
					}
					if !more {
						return
					}
					start = page[len(page)-1].Key + "\x00"
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for si, got := range scans {
			if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Fatalf("scan %d is out of order or repeats a key: %v", si, got)
			}
			seen := map[string]bool{}
			for _, k := range got {
				if !before[k] && !written[0][k] && !written[1][k] {
					t.Fatalf("scan %d returned %q, never written", si, k)
				}
				seen[k] = true
			}
			for k := range before {
				if !seen[k] {
					t.Fatalf("scan %d missed %q", si, k)
				}
			}
		}
		all := listAll(t, s, "", "", 1000)
		if want := len(before) + len(written[0]) + len(written[1]); len(all) != want {
			t.Fatalf("a scan after the writers: %d keys, want %d", len(all), want)
		}
	})
}
