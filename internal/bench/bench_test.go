package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
)

func TestRunObjectStoreMemstore(t *testing.T) {
	ctx := context.Background()
	s := memstore.New(memstore.Options{})
	defer s.Close()
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			hooked := false
			w := Workload{
				Kind:        k,
				ObjectSize:  64 << 10,
				Objects:     4,
				Concurrency: 3,
				TotalBytes:  1 << 20,
				Duration:    10 * time.Second,
				BeforeMeasure: func(context.Context) error {
					hooked = true
					return nil
				},
			}
			r, err := RunObjectStore(ctx, s, w)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(r)
			if !hooked {
				t.Error("BeforeMeasure did not run")
			}
			wantBS := uint64(64 << 10)
			if k == RandWrite || k == RandRead {
				wantBS = 4096
			}
			if r.BlockSize != wantBS || r.Concurrency != 3 || r.Workload != k {
				t.Errorf("result %+v: wrong parameters", r)
			}
			if r.Ops == 0 || r.Bytes != uint64(r.Ops)*wantBS || r.IOPS <= 0 || r.MiBps <= 0 {
				t.Errorf("result %+v: nothing measured", r)
			}
			if r.Bytes > 1<<20 {
				t.Errorf("did %d bytes, past TotalBytes", r.Bytes)
			}
			if k == SeqRead && r.Bytes != 4*64<<10 {
				t.Errorf("sequential read of 4 objects of 64 KiB read %d bytes", r.Bytes)
			}
			if r.P50 > r.P99 || r.P99 > r.Max {
				t.Errorf("percentiles out of order: %+v", r)
			}
			if !strings.Contains(r.String(), string(k)) {
				t.Errorf("String() = %q", r.String())
			}
		})
	}
	// Each sequential writer filled its own objects in order: every
	// writer that got a share of the byte budget (the scheduler may give
	// it all to some of them) wrote its first object whole.
	c := objectstore.PGCollection(1, 0)
	w, _ := Workload{Kind: SeqWrite}.withDefaults()
	wrote := 0
	for writer := range 3 {
		info, err := s.Stat(ctx, c, w.object(writer, 0))
		if errors.Is(err, objectstore.ErrNotFound) {
			continue
		}
		wrote++
		if err != nil || info.Size != 64<<10 {
			t.Errorf("writer %d's first object: %+v, %v", writer, info, err)
		}
	}
	if wrote == 0 {
		t.Error("no sequential writer wrote its first object")
	}
}

func TestRunObjectStoreDuration(t *testing.T) {
	s := memstore.New(memstore.Options{})
	defer s.Close()
	start := time.Now()
	r, err := RunObjectStore(context.Background(), s, Workload{Kind: RandRead, ObjectSize: 16 << 10, Objects: 2, Duration: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second || r.Ops == 0 {
		t.Errorf("run took %v with %d ops", d, r.Ops)
	}
}

func TestOnePass(t *testing.T) {
	s := memstore.New(memstore.Options{})
	defer s.Close()
	for _, k := range []Kind{RandRead, RandWrite} {
		r, err := RunObjectStore(context.Background(), s, Workload{Kind: k, ObjectSize: 64 << 10, Objects: 5, Concurrency: 4, OnePass: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Ops != 5*16 {
			t.Errorf("%s: one pass over 80 blocks did %d operations", k, r.Ops)
		}
	}
}

func TestWorkloadErrors(t *testing.T) {
	s := memstore.New(memstore.Options{})
	defer s.Close()
	ctx := context.Background()
	if _, err := RunObjectStore(ctx, s, Workload{Kind: "sideways"}); err == nil {
		t.Error("unknown workload accepted")
	}
	if _, err := RunObjectStore(ctx, s, Workload{Kind: SeqWrite, ObjectSize: 10000, BlockSize: 4096}); err == nil {
		t.Error("block size that does not divide the object accepted")
	}
	boom := errors.New("boom")
	_, err := RunObjectStore(ctx, s, Workload{Kind: SeqRead, ObjectSize: 4096, Objects: 2, BeforeMeasure: func(context.Context) error { return boom }})
	if !errors.Is(err, boom) {
		t.Errorf("BeforeMeasure error: %v", err)
	}
	if k, err := ParseKind("rand-read"); err != nil || k != RandRead {
		t.Errorf("ParseKind: %v %v", k, err)
	}
}
