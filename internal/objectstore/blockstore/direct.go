package blockstore

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"unsafe"
)

// Direct reads. On the OS file system (vfs.Default) the store opens the
// data file a second time with O_DIRECT. Small aligned reads go through it
// with Linux AIO (no kernel readahead pulling in neighbours, no page-cache
// copy); large aligned reads (directMax and up) go through it too, split
// into directPiece pieces read at once: large copy-on-write data is
// written with O_DIRECT (commit.go), so it is not in the page cache, and a
// cold buffered read of it cost the kernel far more CPU than a direct one
// (4 MiB: 375 MB/s buffered, 570-700 MB/s direct on the benchmark disk).
// O_DIRECT needs the buffer, the offset and the length aligned to the
// device's logical block; other reads go through the ordinary file. A
// direct read of a range with dirty cached pages makes the kernel write
// them back first, so it sees every completed buffered write.

// directAlign is the alignment direct reads need (the largest logical
// block size of common devices).
const directAlign = 4096

// directMax is the size from which reads are split into directPiece
// pieces read at once.
const directMax = 256 << 10

// directPiece is the piece of a large direct read done at once: several
// in flight give the device the queue depth one synchronous read lacks,
// and on a huge-page staging buffer each is one device request.
const directPiece = 1 << 20

// alignedBuf returns a zeroed n-byte slice whose first byte is
// directAlign aligned.
func alignedBuf(n int) []byte {
	if n > 0 && n%directAlign == 0 {
		// Go's allocator places objects of these sizes (its size
		// classes that are multiples of 4 KiB, and large objects) on
		// 4 KiB boundaries in practice; check rather than rely on it.
		b := make([]byte, n)
		if uintptr(unsafe.Pointer(&b[0]))&(directAlign-1) == 0 {
			return b
		}
	}
	b := make([]byte, n+directAlign)
	skip := 0
	if r := int(uintptr(unsafe.Pointer(&b[0])) & (directAlign - 1)); r != 0 {
		skip = directAlign - r
	}
	return b[skip : skip+n : skip+n]
}

func isAligned(p []byte, off uint64) bool {
	return len(p) > 0 && off%directAlign == 0 && len(p)%directAlign == 0 &&
		uintptr(unsafe.Pointer(&p[0]))&(directAlign-1) == 0
}

// readFull reads len(p) bytes at off of the data file; bytes past the end
// of a data file that was never written that far read as zeros.
func (s *Store) readFull(p []byte, off uint64) error {
	var n int
	var err error
	if d := s.direct; d != nil && len(p) >= directMax && isAligned(p, off) {
		return s.readDirectParallel(p, off)
	}
	if d := s.direct; d != nil && len(p) < directMax && isAligned(p, off) {
		err = errAIOBusy
		if s.aio != nil {
			n, err = s.aio.readAt(p, int64(off))
		}
		if err == errAIOBusy {
			n, err = d.ReadAt(p, int64(off))
		}
		if errors.Is(err, syscall.EINVAL) {
			n, err = s.file.ReadAt(p, int64(off))
		}
	} else {
		n, err = s.file.ReadAt(p, int64(off))
	}
	if err == io.EOF || (err == nil && n < len(p)) {
		clear(p[n:])
		return nil
	}
	if err != nil {
		return fmt.Errorf("read data file at %d: %w", off, err)
	}
	return nil
}

// readVerified reads n bytes at off into dst() like readFull and calls
// verify on each piece it read, [lo, hi) of the destination, returning
// the first error. dst returns the destination, waiting for it to be
// allocated if need be; it is called only once data has arrived. Large
// reads go through staging buffers in pieces read at once, and each
// piece is copied and verified as it arrives, while the device still
// reads the others.
func (s *Store) readVerified(n int, dst func() []byte, off uint64, verify func(lo, hi int) error) error {
	if s.direct != nil && n >= directMax && off%directAlign == 0 && n%directAlign == 0 {
		if p := s.startRead(off, n); p != nil {
			if s.takePrefetch(p) {
				return s.readPrefetched(p, dst, verify)
			}
		}
		if b := s.staging.get(); b != nil {
			defer s.staging.put(b)
			return s.readStaged(n, dst, off, b, verify)
		}
	}
	p := dst()
	if err := s.readFull(p, off); err != nil {
		return err
	}
	return verify(0, len(p))
}

// readStaged reads n bytes at off into dst() through the staging buffer
// b, one stagingSize window at a time, each in directPiece pieces read at
// once.
func (s *Store) readStaged(n int, dst func() []byte, off uint64, b []byte, verify func(lo, hi int) error) error {
	for w := 0; w < n; w += stagingSize {
		err := spread(min(stagingSize, n-w), func(lo, hi int) error {
			if err := s.readPiece(b[lo:hi], int64(off)+int64(w+lo)); err != nil {
				return err
			}
			copy(dst()[w+lo:w+hi], b[lo:hi])
			return verify(w+lo, w+hi)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// readPiece reads len(p) bytes at off with O_DIRECT (the buffered file if
// the file system refuses), zeros past the end of the file.
func (s *Store) readPiece(p []byte, off int64) error {
	n, err := s.direct.ReadAt(p, off)
	if errors.Is(err, syscall.EINVAL) {
		n, err = s.file.ReadAt(p, off)
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
func (s *Store) readDirectParallel(p []byte, off uint64) error {
	return spread(len(p), func(lo, hi int) error { return s.readPiece(p[lo:hi], int64(off)+int64(lo)) })
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
