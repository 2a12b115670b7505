package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// testConcurrency runs writers, each owning one object and checking its
// own writes, beside readers that list and read everything; run it with
// -race.
func testConcurrency(e *env) {
	e.setup(pgA, pgB)
	const writers, rounds = 8, 50
	var wg, readers sync.WaitGroup
	errs := make(chan error, writers+4)
	for w := range writers {
		wg.Go(func() {
			o := obj(fmt.Sprintf("w%d", w))
			var comps []*objectstore.Completion
			for r := range rounds {
				data := pattern(byte(w*rounds+r), 100+r)
				c, err := e.s.Queue(e.ctx, txn().Write(pgA, o, 0, data).Truncate(pgA, o, uint64(len(data))).
					SetAttr(pgA, o, "round", []byte{byte(r)}).
					OmapSetKeys(pgA, o, map[string][]byte{fmt.Sprintf("r%03d", r): data[:8]}).
					Touch(pgB, obj(fmt.Sprintf("w%d.r%d", w, r))))
				if err != nil {
					errs <- err
					return
				}
				comps = append(comps, c)
				if r%5 != 4 {
					continue
				}
				for _, c := range comps {
					if err := c.Wait(e.ctx); err != nil {
						errs <- err
						return
					}
				}
				comps = comps[:0]
				if got, err := e.s.Read(e.ctx, pgA, o, 0, 0); err != nil || !bytes.Equal(got, data) {
					errs <- fmt.Errorf("writer %d round %d: read %d bytes, err %v", w, r, len(got), err)
					return
				}
			}
			for _, c := range comps {
				if err := c.Wait(e.ctx); err != nil {
					errs <- err
				}
			}
		})
	}
	done := make(chan struct{})
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				objs, _, err := e.s.ListObjects(e.ctx, pgA, objid.ID{}, 0)
				if err != nil {
					errs <- err
					return
				}
				for _, o := range objs {
					if _, err := e.s.Read(e.ctx, pgA, o, 0, 0); err != nil {
						errs <- err
						return
					}
					if _, _, err := e.s.OmapIterate(e.ctx, pgA, o, "", "r", 10); err != nil {
						errs <- err
						return
					}
				}
				if _, err := e.s.StatFS(e.ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		e.Error(err)
	}
	for w := range writers {
		kvs, _, err := e.s.OmapIterate(e.ctx, pgA, obj(fmt.Sprintf("w%d", w)), "", "", 0)
		if err != nil || len(kvs) != rounds {
			e.Errorf("writer %d: %d omap keys, err %v", w, len(kvs), err)
		}
	}
	if objs := e.list(pgB); len(objs) != writers*rounds {
		e.Errorf("%v holds %d objects, want %d", pgB, len(objs), writers*rounds)
	}
}

func testClose(e *env) {
	e.setup(pgA)
	var comps []*objectstore.Completion
	for i := range 20 {
		c, err := e.s.Queue(e.ctx, txn().Write(pgA, obj("o"), uint64(i)*P, pattern(byte(i), P)))
		if err != nil {
			e.Fatalf("queue: %v", err)
		}
		comps = append(comps, c)
	}
	if err := e.s.Close(); err != nil {
		e.Fatalf("close: %v", err)
	}
	for i, c := range comps {
		select {
		case <-c.Committed():
		default:
			e.Fatalf("transaction %d not committed when Close returned", i)
		}
		if c.Err() != nil {
			e.Fatalf("transaction %d: %v", i, c.Err())
		}
	}
	o := obj("o")
	errs := map[string]error{"close again": e.s.Close()}
	_, errs["queue"] = e.s.Queue(e.ctx, txn().Touch(pgA, o))
	_, errs["read"] = e.s.Read(e.ctx, pgA, o, 0, 0)
	_, errs["stat"] = e.s.Stat(e.ctx, pgA, o)
	_, errs["extentmap"] = e.s.ExtentMap(e.ctx, pgA, o, 0, 0)
	_, errs["getattr"] = e.s.GetAttr(e.ctx, pgA, o, "a")
	_, errs["getattrs"] = e.s.GetAttrs(e.ctx, pgA, o)
	_, errs["omap header"] = e.s.OmapGetHeader(e.ctx, pgA, o)
	_, errs["omap values"] = e.s.OmapGetValues(e.ctx, pgA, o, nil)
	_, _, errs["omap iterate"] = e.s.OmapIterate(e.ctx, pgA, o, "", "", 0)
	_, errs["list collections"] = e.s.ListCollections(e.ctx)
	_, errs["collection exists"] = e.s.CollectionExists(e.ctx, pgA)
	_, _, errs["list objects"] = e.s.ListObjects(e.ctx, pgA, objid.ID{}, 0)
	_, errs["statfs"] = e.s.StatFS(e.ctx)
	for name, err := range errs {
		if !errors.Is(err, objectstore.ErrClosed) {
			e.Errorf("%s after close: %v, want ErrClosed", name, err)
		}
	}
}
