package fsclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/clock"
	"github.com/cuttlestore/cuttle/internal/mds/locker"
	"github.com/cuttlestore/cuttle/internal/msgr/memnet"
	"github.com/cuttlestore/cuttle/internal/sim"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper"
	"github.com/cuttlestore/cuttle/striper/layout"
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

// The cap sets the tests switch a file between.
const (
	capsBuffered = locker.FileShared | locker.FileRead | locker.FileWrite | locker.FileCache | locker.FileBuffer | locker.FileExtend
	capsCached   = locker.FileShared | locker.FileRead | locker.FileCache
	capsSync     = locker.FileRead | locker.FileWrite
	capsLazy     = locker.FileRead | locker.FileWrite | locker.FileLazy
)

// dataCluster starts a monitor and three OSDs in the simulator with a
// pool "data", and returns an I/O context on it.
func dataCluster(t *testing.T) *rados.IOContext {
	t.Helper()
	c := sim.New(t, sim.Options{Net: memnet.Config{Seed: 11, MinDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
	for _, h := range []string{"h1", "h2", "h3"} {
		c.AddOSD(h)
	}
	c.Run("osd pool create", "pool", "data", "pg_num", "8", "size", "2")
	c.WaitForEpoch(c.Epoch())
	io, err := c.Client("client.fsclient").OpenIOContext("data")
	if err != nil {
		t.Fatal(err)
	}
	return io
}

func newStriper(t *testing.T, io *rados.IOContext, l layout.Layout) *striper.Striper {
	t.Helper()
	l.Pool = io.PoolID()
	s, err := striper.New(io, l, striper.Options{MaxInFlight: 4})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fileObjects lists the names of inode ino's objects, sorted.
func fileObjects(t *testing.T, io *rados.IOContext, ino uint64) []string {
	t.Helper()
	var names []string
	for e, err := range io.Objects(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Name, fmt.Sprintf("%x.", ino)) {
			names = append(names, e.Name)
		}
	}
	slices.Sort(names)
	return names
}

// osdBytes reads the whole file as the OSDs hold it, through a second
// client-side file without caching or buffering.
func osdBytes(t *testing.T, st *striper.Striper, ino, size uint64) []byte {
	t.Helper()
	g := newFileData(st, ino, size, time.Time{}, capsSync, false, clock.Real(), DataOptions{})
	buf := make([]byte, size)
	n, err := g.ReadAt(context.Background(), buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return buf[:n]
}

// Random writes, reads, truncates, flushes and cap changes (buffered,
// cached, synchronous, lazy) at offsets across object and stripe
// boundaries, checked byte for byte against a model of the file; and,
// whenever the file leaves write-back mode (a revocation of Fb) and at
// the end, the OSDs' bytes read by another reader against the model.
func TestFileDataAgainstModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ioc := dataCluster(t)
		ctx := context.Background()
		layouts := []layout.Layout{
			{ObjectSize: 64 * kib, StripeUnit: 64 * kib, StripeCount: 1},
			{ObjectSize: 256 * kib, StripeUnit: 64 * kib, StripeCount: 3},
			{ObjectSize: 192 * kib, StripeUnit: 64 * kib, StripeCount: 2},
		}
		modes := []struct {
			caps locker.Caps
			lazy bool
		}{{capsBuffered, false}, {capsCached | locker.FileWrite, false}, {capsSync, false}, {capsLazy, true}}
		for li, l := range layouts {
			st := newStriper(t, ioc, l)
			ino := uint64(0x10000000000 + li)
			seed := uint64(li)
			rng := rand.New(rand.NewPCG(seed, 3))
			opts := DataOptions{BufferBytes: 300 * kib, CacheBytes: 512 * kib, ReadaheadMin: 64 * kib, ReadaheadMax: 256 * kib}
			f := newFileData(st, ino, 0, time.Time{}, capsBuffered, false, clock.Real(), opts)
			var model []byte
			maxSize := int(3*st.Layout().Period() + 1000)
			lastRead := 0
			for op := range 120 {
				where := fmt.Sprintf("layout %v seed %d op %d", st.Layout(), seed, op)
				switch k := rng.IntN(20); {
				case k < 7: // write
					off := rng.IntN(maxSize)
					n := 1 + rng.IntN(min(maxSize-off, 100*kib))
					data := make([]byte, n)
					for i := range data {
						data[i] = byte(rng.Uint32()) | 1
					}
					if _, err := f.WriteAt(ctx, data, uint64(off)); err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					if len(model) < off+n {
						model = append(model, make([]byte, off+n-len(model))...)
					}
					copy(model[off:], data)
				case k < 13: // read: sequential runs half the time, past the end too
					off := rng.IntN(maxSize)
					if rng.IntN(2) == 0 {
						off = lastRead
					}
					buf := bytes.Repeat([]byte{0xee}, 1+rng.IntN(64*kib))
					n, err := f.ReadAt(ctx, buf, uint64(off))
					if err != nil && !errors.Is(err, io.EOF) {
						t.Fatalf("%s: %v", where, err)
					}
					lastRead = off + n
					var want []byte
					if off < len(model) {
						want = model[off:min(len(model), off+len(buf))]
					}
					if !bytes.Equal(buf[:n], want) {
						t.Fatalf("%s: read [%d,+%d) of a %d-byte file: %d bytes that differ from the model's %d", where, off, len(buf), len(model), n, len(want))
					}
					if (n < len(buf)) != errors.Is(err, io.EOF) {
						t.Fatalf("%s: read of %d bytes returned %d, err %v", where, len(buf), n, err)
					}
				case k < 15: // truncate, down or up
					size := rng.IntN(maxSize)
					if err := f.Truncate(ctx, uint64(size)); err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					if size < len(model) {
						model = model[:size]
					} else {
						model = append(model, make([]byte, size-len(model))...)
					}
				case k < 16: // fsync
					if err := f.Flush(ctx); err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					if got := osdBytes(t, st, ino, uint64(len(model))); !bytes.Equal(got, model) {
						t.Fatalf("%s: after a flush the OSDs hold other bytes than the model", where)
					}
				default: // the MDS changes the caps
					m := modes[rng.IntN(len(modes))]
					if err := f.SetCaps(ctx, m.caps, m.lazy); err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					if !m.caps.CanBuffer(m.lazy) {
						if f.dirty.Len() != 0 {
							t.Fatalf("%s: caps %v leave %d dirty bytes", where, m.caps, f.dirty.Bytes())
						}
						if got := osdBytes(t, st, ino, uint64(len(model))); !bytes.Equal(got, model) {
							t.Fatalf("%s: after Fb was revoked the OSDs hold other bytes than the model", where)
						}
					}
					if !m.caps.CanCache(m.lazy) && f.cache.Len() != 0 && !f.dropCache {
						t.Fatalf("%s: caps %v leave %d cached bytes", where, m.caps, f.cache.Bytes())
					}
				}
				if f.dirty.Bytes() > opts.BufferBytes {
					t.Fatalf("%s: %d dirty bytes, over the %d limit", where, f.dirty.Bytes(), opts.BufferBytes)
				}
				if f.cache.Bytes() > opts.CacheBytes {
					t.Fatalf("%s: %d cached bytes, over the %d limit", where, f.cache.Bytes(), opts.CacheBytes)
				}
				if f.Size() != uint64(len(model)) {
					t.Fatalf("%s: size %d, model %d", where, f.Size(), len(model))
				}
			}
			if err := f.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := osdBytes(t, st, ino, uint64(len(model))); !bytes.Equal(got, model) {
				t.Fatalf("layout %v: at the end the OSDs hold other bytes than the model", st.Layout())
			}
			// Nothing lies at the OSDs past the size.
			for _, name := range fileObjects(t, ioc, ino) {
				var no uint64
				if _, err := fmt.Sscanf(name[strings.IndexByte(name, '.')+1:], "%x", &no); err != nil {
					t.Fatal(err)
				}
				if st.Layout().ObjectLen(uint64(len(model)), no) == 0 {
					t.Errorf("layout %v: object %s lies wholly past the size %d", st.Layout(), name, len(model))
				}
			}
		}
	})
}

// Sequential reads under Fc read ahead in a growing window: a 1 MiB file
// read 4 KiB at a time takes a handful of OSD reads, and every 4 KiB
// read without Fc goes to the OSDs.
func TestFileDataReadahead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ioc := dataCluster(t)
		ctx := context.Background()
		st := newStriper(t, ioc, layout.Layout{ObjectSize: 256 * kib, StripeUnit: 64 * kib, StripeCount: 2})
		const ino, size = 0x10000000100, mib
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		if err := st.WriteAt(ctx, ino, data, 0); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			caps     locker.Caps
			maxReads uint64
		}{{capsCached, 8}, {capsSync, size / (4 * kib)}} {
			f := newFileData(st, ino, size, time.Time{}, c.caps, false, clock.Real(), DataOptions{ReadaheadMin: 64 * kib, ReadaheadMax: 512 * kib})
			var got []byte
			buf := make([]byte, 4*kib)
			for off := 0; ; off += len(buf) {
				n, err := f.ReadAt(ctx, buf, uint64(off))
				got = append(got, buf[:n]...)
				if errors.Is(err, io.EOF) || n == 0 {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("caps %v: read back other bytes", c.caps)
			}
			s := f.Stats()
			if s.OSDReads > c.maxReads || (c.caps == capsSync && s.OSDReads != c.maxReads) {
				t.Errorf("caps %v: %d OSD reads for %d sequential 4 KiB reads, want at most %d", c.caps, s.OSDReads, size/(4*kib), c.maxReads)
			}
			t.Logf("caps %v: %d OSD reads, %d bytes, %d cache hits", c.caps, s.OSDReads, s.ReadBytes, s.CacheHits)
		}
	})
}

// A write far past the end leaves a hole that reads as zeros and makes
// only the objects it touches; a truncate to zero removes them all.
func TestFileDataSparseAndTruncate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ioc := dataCluster(t)
		ctx := context.Background()
		st := newStriper(t, ioc, layout.Layout{ObjectSize: 64 * kib, StripeUnit: 64 * kib, StripeCount: 1})
		const ino = 0x10000000200
		f := newFileData(st, ino, 0, time.Time{}, capsBuffered, false, clock.Real(), DataOptions{})
		if _, err := f.WriteAt(ctx, []byte("tail"), 10*mib); err != nil {
			t.Fatal(err)
		}
		if err := f.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if got, want := fileObjects(t, ioc, ino), []string{"10000000200.000000a0"}; !slices.Equal(got, want) {
			t.Fatalf("objects %v, want %v", got, want)
		}
		if size, _, dirty, _ := f.DirtyAttrs(); size != 10*mib+4 || !dirty {
			t.Fatalf("attrs to flush: size %d dirty %v, want %d true", size, dirty, 10*mib+4)
		}
		buf := bytes.Repeat([]byte{0xee}, 128*kib)
		if _, err := f.ReadAt(ctx, buf, 5*mib); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, make([]byte, len(buf))) {
			t.Fatal("a hole read other bytes than zeros")
		}
		if err := f.Truncate(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if got := fileObjects(t, ioc, ino); len(got) != 0 {
			t.Fatalf("objects after truncating to 0: %v", got)
		}
		if n, err := f.ReadAt(ctx, buf, 0); n != 0 || !errors.Is(err, io.EOF) {
			t.Fatalf("read of an empty file: %d, %v", n, err)
		}
	})
}

// Writes under Fb stay in the buffer (no OSD write) until a flush, the
// buffer limit or the revocation of Fb; the size the MDS reports does
// not undo a larger size the client has not reported yet.
func TestFileDataWriteBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ioc := dataCluster(t)
		ctx := context.Background()
		st := newStriper(t, ioc, layout.Default(0))
		const ino = 0x10000000300
		f := newFileData(st, ino, 0, time.Time{}, capsBuffered, false, clock.Real(), DataOptions{BufferBytes: 64 * kib})
		for i := range 8 {
			if _, err := f.WriteAt(ctx, bytes.Repeat([]byte{byte(i + 1)}, 4*kib), uint64(i*4*kib)); err != nil {
				t.Fatal(err)
			}
		}
		if s := f.Stats(); s.OSDWrites != 0 {
			t.Fatalf("%d OSD writes under Fb before a flush", s.OSDWrites)
		}
		if got := fileObjects(t, ioc, ino); len(got) != 0 {
			t.Fatalf("objects before a flush: %v", got)
		}
		f.SetAttr(0, time.Time{}) // a stale grant: the MDS has not heard of the writes
		if f.Size() != 32*kib {
			t.Fatalf("size %d after the MDS's stale size, want %d", f.Size(), 32*kib)
		}
		// Past the limit the buffer is written back.
		if _, err := f.WriteAt(ctx, make([]byte, 40*kib), 32*kib); err != nil {
			t.Fatal(err)
		}
		if s := f.Stats(); s.Flushes != 1 || f.dirty.Len() != 0 {
			t.Fatalf("after passing the limit: %d flushes, %d dirty bytes", s.Flushes, f.dirty.Bytes())
		}
		if _, err := f.WriteAt(ctx, []byte("more"), 72*kib); err != nil {
			t.Fatal(err)
		}
		// Revoking Fb writes it back before the ack.
		if err := f.SetCaps(ctx, capsSync, false); err != nil {
			t.Fatal(err)
		}
		if got := osdBytes(t, st, ino, 72*kib+4); !bytes.Equal(got[72*kib:], []byte("more")) {
			t.Fatalf("after revoking Fb the OSDs hold %q", got[72*kib:])
		}
		size, _, dirty, gen := f.DirtyAttrs()
		// The MDS's view arriving between the flush and its ack (a
		// grant with a newer mtime) does not keep the attributes dirty.
		f.SetAttr(size, time.Now().Add(time.Hour))
		f.AttrsFlushed(gen)
		if _, _, dirty2, _ := f.DirtyAttrs(); !dirty || dirty2 {
			t.Fatalf("dirty attrs before and after the flush ack: %v %v", dirty, dirty2)
		}
		// A write after the flush was built keeps them dirty.
		_, _, _, gen = f.DirtyAttrs()
		if _, err := f.WriteAt(ctx, []byte("again"), 0); err != nil {
			t.Fatal(err)
		}
		f.AttrsFlushed(gen)
		if _, _, dirty3, _ := f.DirtyAttrs(); !dirty3 {
			t.Fatal("a write after the flush lost its dirty attributes to the flush's ack")
		}
	})
}

// Synchronous writes and reads of one file at 16 disjoint offsets run
// together: in virtual time 16 concurrent 4 KiB writes take a fraction
// of 16 one after another (serialised, as before the range lock, they
// took as long); the bytes land where they should. A flush issued while
// they are in flight waits for them.
func TestFileDataConcurrentSyncIO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ioc := dataCluster(t)
		ctx := context.Background()
		st := newStriper(t, ioc, layout.Default(0))
		const ino, n = 0x10000000400, 16
		f := newFileData(st, ino, 0, time.Time{}, capsSync, false, clock.Real(), DataOptions{})
		block := func(i int) []byte { return bytes.Repeat([]byte{byte(i + 1)}, 4*kib) }
		start := time.Now()
		for i := range n {
			if _, err := f.WriteAt(ctx, block(i), uint64(i)*64*kib); err != nil {
				t.Fatal(err)
			}
		}
		serial := time.Since(start)
		start = time.Now()
		errs := make(chan error, n+1)
		for i := range n {
			go func() {
				_, err := f.WriteAt(ctx, block(n-i), uint64(i)*64*kib)
				errs <- err
			}()
		}
		synctest.Wait() // all 16 in flight
		if got := f.ranges.inFlight(); got != n {
			t.Fatalf("%d writes in flight, want %d", got, n)
		}
		go func() { errs <- f.Flush(ctx) }()
		synctest.Wait()
		if f.ranges.waiting() != 1 {
			t.Fatalf("a flush behind writes in flight: %d waiting, want 1", f.ranges.waiting())
		}
		for range n + 1 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		concurrent := time.Since(start)
		if concurrent*3 > serial {
			t.Errorf("16 concurrent writes took %v, 16 serial %v: not concurrent", concurrent, serial)
		}
		t.Logf("16 x 4 KiB writes: serial %v, concurrent %v", serial, concurrent)
		got := osdBytes(t, st, ino, (n-1)*64*kib+4*kib)
		for i := range n {
			if !bytes.Equal(got[i*64*kib:i*64*kib+4*kib], block(n-i)) {
				t.Fatalf("block %d holds other bytes", i)
			}
		}
	})
}

// A revocation of Fb arriving while a flush is in flight and a buffered
// write waits behind it waits for both, and its write-back includes the
// write (acknowledged before the ack).
func TestFileDataRevokeDuringIO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ioc := dataCluster(t)
		ctx := context.Background()
		st := newStriper(t, ioc, layout.Default(0))
		const ino = 0x10000000500
		f := newFileData(st, ino, 0, time.Time{}, capsBuffered, false, clock.Real(), DataOptions{})
		if _, err := f.WriteAt(ctx, bytes.Repeat([]byte{1}, 64*kib), 0); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 3)
		go func() { errs <- f.Flush(ctx) }()
		synctest.Wait() // the flush's write is at the OSDs
		go func() {
			_, err := f.WriteAt(ctx, []byte("late"), 8*kib)
			errs <- err
		}()
		synctest.Wait()
		revoked := make(chan error, 1)
		go func() { revoked <- f.SetCaps(ctx, capsSync, false) }()
		synctest.Wait()
		if f.ranges.inFlight() != 1 || f.ranges.waiting() != 2 {
			t.Fatalf("%d in flight, %d waiting; want the flush, then the write and the revocation", f.ranges.inFlight(), f.ranges.waiting())
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if err := <-revoked; err != nil {
			t.Fatal(err)
		}
		if got := osdBytes(t, st, ino, 64*kib); !bytes.Equal(got[8*kib:8*kib+4], []byte("late")) {
			t.Fatalf("after the revocation the OSDs hold %q", got[8*kib:8*kib+4])
		}
	})
}
