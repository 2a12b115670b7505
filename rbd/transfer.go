package rbd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Import and export: an image to and from a stream of its bytes (a raw
// disk image), chunk by chunk, TransferInFlight chunks at once, skipping
// what holds no data both ways.

// transferChunk is the bytes one step of Import or Export moves.
const transferChunk = 4 << 20

// TransferInFlight is how many chunks Import and Export move at once.
const TransferInFlight = 16

// zeroBlock is the granularity at which Import skips zeros: a block of
// all zeros is not written (the image reads zeros there anyway).
const zeroBlock = 4 << 10

// TransferOptions qualify Import and Export.
type TransferOptions struct {
	// Progress, if set, is told the bytes done so far, one call at a
	// time (in order for Export, as chunks complete for Import).
	Progress func(done uint64)
}

// Export writes the image's bytes (at the snapshot it is open at) to w,
// in order. Ranges the image holds no data in (AllocatedExtents: no
// object, or past an object's end) are not read. If w is an
// io.WriterAt (a regular file), those ranges are not written either, so the file
// is as sparse as the image (Export writes the last byte, to give it the
// image's size, unless that is data). Otherwise (a pipe, a terminal,
// any other writer) holes are written as zeros.
func (img *Image) Export(ctx context.Context, w io.Writer, o TransferOptions) error {
	size := img.Size()
	// Where the data is, once for the whole image (the object map, or a
	// stat of each object): then each chunk reads only its part of it.
	all, err := img.AllocatedExtents(ctx, 0, size)
	if err != nil {
		return fmt.Errorf("rbd: export %q: %w", img.name, err)
	}
	n := int((size + transferChunk - 1) / transferChunk)
	perChunk := make([][]Extent, n) // relative to the chunk
	for _, e := range all {
		for e.Length > 0 {
			i := e.Offset / transferChunk
			l := min(e.Length, (i+1)*transferChunk-e.Offset)
			perChunk[i] = append(perChunk[i], Extent{Offset: e.Offset - i*transferChunk, Length: l})
			e.Offset, e.Length = e.Offset+l, e.Length-l
		}
	}
	wa, sparse := w.(io.WriterAt)
	if f, ok := w.(*os.File); ok { // stdout may be a pipe or a terminal: only a regular file seeks
		st, err := f.Stat()
		sparse = err == nil && st.Mode().IsRegular()
	}
	type result struct {
		buf []byte // the chunk's bytes, nil if it holds no data
		err error
	}
	slots := make([]chan result, n)
	for i := range slots {
		slots[i] = make(chan result, 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	sem := make(chan struct{}, TransferInFlight)
	// The chunk buffers, reused once written: at most TransferInFlight
	// are in use, and a fresh 4 MiB buffer costs the runtime zeroing it.
	var free sync.Pool
	var wg sync.WaitGroup
	started := make(chan struct{}) // closed when the last read has started (or none will)
	defer func() {
		cancel()
		<-started
		wg.Wait()
	}()
	go func() {
		defer close(started)
		for i := range n {
			if len(perChunk[i]) == 0 {
				slots[i] <- result{} // a hole: nothing to read
				continue
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done() // the writer frees the slot in sem once it wrote the chunk
				off := uint64(i) * transferChunk
				r := result{buf: chunkBuffer(&free, min(transferChunk, size-off), perChunk[i])}
				for _, e := range perChunk[i] {
					if r.err = img.ReadAt(ctx, r.buf[e.Offset:e.Offset+e.Length], off+e.Offset); r.err != nil {
						break
					}
				}
				slots[i] <- r
			}()
		}
	}()
	zeros := make([]byte, min(transferChunk, size))
	var done uint64
	for i := range n {
		var r result
		select {
		case r = <-slots[i]:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if len(perChunk[i]) > 0 {
			<-sem // at most TransferInFlight chunks read and not yet written
		}
		if r.err != nil {
			return fmt.Errorf("rbd: export %q: %w", img.name, r.err)
		}
		off := uint64(i) * transferChunk
		length := min(transferChunk, size-off)
		var err error
		switch {
		case sparse:
			for _, e := range perChunk[i] {
				if _, err = wa.WriteAt(r.buf[e.Offset:e.Offset+e.Length], int64(off+e.Offset)); err != nil {
					break
				}
			}
			if err == nil && i == n-1 && !endsInData(perChunk[i], length) {
				_, err = wa.WriteAt([]byte{0}, int64(size-1)) // the file's size
			}
		case r.buf == nil:
			_, err = w.Write(zeros[:length])
		default:
			_, err = w.Write(r.buf)
		}
		if err != nil {
			return fmt.Errorf("rbd: export %q: write: %w", img.name, err)
		}
		if r.buf != nil {
			free.Put(&r.buf) // w does not keep it (io.Writer's contract)
		}
		done += length
		if o.Progress != nil {
			o.Progress(done)
		}
	}
	return nil
}

// chunkBuffer returns a buffer of n bytes for a chunk whose data runs
// are data (relative to the chunk, in order): one from free if there is
// one, with the bytes outside the runs zeroed (they read as zeros; the
// runs are about to be read over), else a new one.
func chunkBuffer(free *sync.Pool, n uint64, data []Extent) []byte {
	p, ok := free.Get().(*[]byte)
	if !ok || uint64(cap(*p)) < n {
		return make([]byte, n)
	}
	buf := (*p)[:n]
	var at uint64
	for _, e := range data {
		clear(buf[at:e.Offset])
		at = e.Offset + e.Length
	}
	clear(buf[at:])
	return buf
}

// endsInData reports whether the chunk's last byte is in a data run.
func endsInData(data []Extent, n uint64) bool {
	return len(data) > 0 && data[len(data)-1].Offset+data[len(data)-1].Length == n
}

// Import writes what r yields to image name of pool p, which it creates
// with options o: of size bytes, or, for a size of -1 (a stream of
// unknown length), as long as r turns out to be (grown as it is read,
// set exactly at the end). Blocks of zeroBlock zeros are not written, so
// the image is as sparse as the bytes allow. On failure the image is left
// as far as it got (remove it to try again).
func Import(ctx context.Context, p *Pool, name string, r io.Reader, size int64, o CreateOptions, t TransferOptions) error {
	initial := uint64(max(size, 0))
	if size < 0 {
		initial = 64 << 20
	}
	if err := p.Create(ctx, name, initial, o); err != nil {
		return err
	}
	img, err := p.Open(ctx, name, OpenOptions{})
	if err != nil {
		return err
	}
	err = img.importFrom(ctx, r, size, t)
	return errors.Join(err, img.Close(ctx))
}

func (img *Image) importFrom(ctx context.Context, r io.Reader, size int64, t TransferOptions) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, TransferInFlight)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var done uint64
	var off uint64
	for ctx.Err() == nil {
		buf := make([]byte, transferChunk)
		k, rerr := io.ReadFull(r, buf)
		if k > 0 {
			buf = buf[:k]
			if end := off + uint64(k); size < 0 && end > img.Size() {
				// A stream: grow ahead, by doubling, once the writes in
				// flight are done (Resize waits for them).
				if err := img.Resize(ctx, max(end, 2*img.Size()), ResizeOptions{}); err != nil {
					cancel(err)
					break
				}
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
			wg.Add(1)
			go func(buf []byte, off uint64) {
				defer func() { <-sem; wg.Done() }()
				if err := img.writeNonZero(ctx, buf, off); err != nil {
					cancel(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				done += uint64(len(buf))
				if t.Progress != nil {
					t.Progress(done)
				}
			}(buf, off)
			off += uint64(k)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			cancel(fmt.Errorf("read: %w", rerr))
			break
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("rbd: import %q: %w", img.name, err)
	}
	if size >= 0 && off != uint64(size) {
		return fmt.Errorf("rbd: import %q: the source gave %d bytes, not the %d expected (EIO)", img.name, off, size)
	}
	if size < 0 && off != img.Size() {
		if err := img.Resize(ctx, off, ResizeOptions{AllowShrink: true}); err != nil {
			return fmt.Errorf("rbd: import %q: %w", img.name, err)
		}
	}
	return nil
}

// writeNonZero writes the runs of buf (at image offset off) that are not
// whole zero blocks.
func (img *Image) writeNonZero(ctx context.Context, buf []byte, off uint64) error {
	for i := 0; i < len(buf); {
		n := min(zeroBlock-int((off+uint64(i))%zeroBlock), len(buf)-i)
		if allZero(buf[i : i+n]) {
			i += n
			continue
		}
		j := i + n
		for j < len(buf) {
			m := min(zeroBlock, len(buf)-j)
			if allZero(buf[j : j+m]) {
				break
			}
			j += m
		}
		if err := img.WriteAt(ctx, buf[i:j], off+uint64(i)); err != nil {
			return err
		}
		i = j
	}
	return nil
}
