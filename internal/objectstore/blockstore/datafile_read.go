package blockstore

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"

	"github.com/cuttlestore/cuttle/internal/objectstore/blockstore/dio"
)

// Direct and cached reads. On the OS file system (vfs.Default) the store
// opens the data file a second time with O_DIRECT. Large aligned reads
// (directMax and up) go through it, split into directPiece pieces read at
// once: large copy-on-write data is written with O_DIRECT (commit.go), so
// it is not in the page cache, and a cold buffered read of it cost the
// kernel far more CPU than a direct one (4 MiB: 375 MB/s buffered,
// 570-700 MB/s direct on the benchmark disk). O_DIRECT needs the buffer,
// the offset and the length aligned to the device's logical block. A
// direct read of a range with dirty cached pages makes the kernel write
// them back first, so it sees every completed buffered write.
//
// Small reads go through the page cache (the ordinary file, with
// readahead off): a hit costs a copy instead of a device round trip, and
// the cache lives outside the OSD's memory budget, where the kernel gives
// it back under pressure (4 KiB random reads of a size-3 pool: 16,500
// IOPS direct, 19,500-24,500 cached; docs/benchmarks/2026-11-26.md,
// "Small reads through the page cache"). Direct writes make the kernel
// drop the cached pages they cover, but a page a racing buffered read
// brought in could survive the drop and hold old data. Every block is
// checked against its checksum anyway, so a mismatch in data that came
// through the cache is read again from the device (readChecked) and only
// the device's copy can be corrupt. Options.DirectReads turns this off;
// ReadDevice (deep scrub) always reads the device.

// directMax is the size from which reads are split into directPiece
// pieces read at once.
const directMax = 256 << 10

// directPiece is the piece of a large direct read done at once: several
// in flight give the device the queue depth one synchronous read lacks,
// and on a huge-page staging buffer each is one device request.
const directPiece = 1 << 20

// readFull reads len(p) bytes at off of the data file; bytes past the end
// of a data file that was never written that far read as zeros. Small
// reads come through the page cache unless dev is set or the store reads
// directly (Options.DirectReads); cached reports whether it did.
func (d *dataFile) readFull(p []byte, off uint64, dev bool) (cached bool, err error) {
	var n int
	if d.direct != nil && len(p) >= directMax && dio.IsAligned(p, off) {
		return false, d.readDirectParallel(p, off)
	}
	cached = d.direct == nil || !dio.IsAligned(p, off) || !(dev || d.directReads)
	if !cached {
		err = dio.ErrBusy
		if d.aio != nil {
			n, err = d.aio.ReadAt(p, int64(off))
		}
		if err == dio.ErrBusy {
			n, err = d.direct.ReadAt(p, int64(off))
		}
		if errors.Is(err, syscall.EINVAL) {
			n, err = d.file.ReadAt(p, int64(off))
		}
	} else {
		if d.direct != nil {
			d.statCachedReads.Add(1)
		}
		n, err = d.file.ReadAt(p, int64(off))
	}
	if err == io.EOF || (err == nil && n < len(p)) {
		clear(p[n:])
		return cached, nil
	}
	if err != nil {
		return cached, fmt.Errorf("read data file at %d: %w", off, err)
	}
	return cached, nil
}

// readChecked reads p at off like readFull and returns what check says
// of it. A checksum mismatch in data that came through the page cache
// may be a stale cached page rather than damage: the pages are dropped
// and read again from the device, and only that copy's verdict counts.
func (d *dataFile) readChecked(p []byte, off uint64, dev bool, check func() error) error {
	cached, err := d.readFull(p, off, dev)
	if err != nil {
		return err
	}
	err = check()
	var mm *mismatchError
	if !cached || d.direct == nil || !errors.As(err, &mm) {
		return err
	}
	d.statStaleCached.Add(1)
	d.dropCached(off, len(p))
	if _, err := d.readFull(p, off, true); err != nil {
		return err
	}
	return check()
}

// readVerified reads n bytes at off into dst() like readChecked and calls
// verify on each piece it read, [lo, hi) of the destination, returning
// the first error. dst returns the destination, waiting for it to be
// allocated if need be; it is called only once data has arrived. Large
// reads go through staging buffers in pieces read at once, and each
// piece is copied and verified as it arrives, while the device still
// reads the others.
func (d *dataFile) readVerified(n int, dst func() []byte, off uint64, dev bool, verify func(lo, hi int) error) error {
	if d.direct != nil && n >= directMax && off%dio.Align == 0 && n%dio.Align == 0 {
		if p := d.startRead(off, n); p != nil {
			if d.takePrefetch(p) {
				return d.readPrefetched(p, dst, verify)
			}
		}
		if b := d.staging.Get(); b != nil {
			defer d.staging.Put(b)
			d.statStaged.Add(1)
			return d.readStaged(n, dst, off, b, verify)
		}
		d.statUnstaged.Add(1)
	}
	p := dst()
	return d.readChecked(p, off, dev, func() error { return verify(0, len(p)) })
}

// readStaged reads n bytes at off into dst() through the staging buffer
// b, one dio.StagingSize window at a time, each in directPiece pieces read at
// once.
func (d *dataFile) readStaged(n int, dst func() []byte, off uint64, b []byte, verify func(lo, hi int) error) error {
	for w := 0; w < n; w += dio.StagingSize {
		err := spread(min(dio.StagingSize, n-w), func(lo, hi int) error {
			if err := d.readPiece(b[lo:hi], int64(off)+int64(w+lo)); err != nil {
				return err
			}
			return d.copyVerified(dst(), w+lo, b[lo:hi], verify)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// copyVerified copies src to dst[at:] and verifies it, a chunk at a
// time: the checksums then read bytes the copy has just brought into
// the cache. Verifying a whole 1 MiB piece after copying it read most of
// it from memory again, and the checksums of freshly read data were the
// largest single cost of 4 MiB reads (docs/benchmarks/2026-11-27.md,
// "Where the 4 MiB reads' CPU goes").
func (d *dataFile) copyVerified(dst []byte, at int, src []byte, verify func(lo, hi int) error) error {
	chunk := max(verifyChunk, int(d.checksumBlock))
	for c := 0; c < len(src); c += chunk {
		e := min(c+chunk, len(src))
		copy(dst[at+c:at+e], src[c:e])
		if err := verify(at+c, at+e); err != nil {
			return err
		}
	}
	return nil
}

// verifyChunk is the most copyVerified copies before verifying: well
// inside a core's L2 cache.
const verifyChunk = 64 << 10

// readPiece reads len(p) bytes at off with O_DIRECT (the buffered file if
// the file system refuses), zeros past the end of the file.
func (d *dataFile) readPiece(p []byte, off int64) error {
	n, err := d.direct.ReadAt(p, off)
	if errors.Is(err, syscall.EINVAL) {
		n, err = d.file.ReadAt(p, off)
	}
	if err == io.EOF || (err == nil && n < len(p)) {
		clear(p[n:])
		err = nil
	}
	if err != nil {
		return fmt.Errorf("read data file at %d: %w", off, err)
	}
	return nil
}

// readDirectParallel reads a large aligned range with O_DIRECT in
// directPiece pieces, all at once. Data written with O_DIRECT (large
// copy-on-write data) is not in the page cache, and a cold buffered read
// of 4 MiB cost the kernel about 10 ms of CPU here (375 MB/s) where these
// reads reached 700 MB/s and more.
func (d *dataFile) readDirectParallel(p []byte, off uint64) error {
	return spread(len(p), func(lo, hi int) error { return d.readPiece(p[lo:hi], int64(off)+int64(lo)) })
}

// spread runs f on [0, n) in directPiece pieces at once and returns the
// first error.
func spread(n int, f func(lo, hi int) error) error {
	pieces := (n + directPiece - 1) / directPiece
	errs := make([]error, pieces)
	var wg sync.WaitGroup
	for i := range pieces {
		lo, hi := i*directPiece, min((i+1)*directPiece, n)
		wg.Go(func() { errs[i] = f(lo, hi) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
