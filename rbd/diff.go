package rbd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Image diffs in Ceph's "rbd diff v1" stream format (docs/FORMATS.md
// "Block image diffs"), so that Ceph's rbd import-diff reads what
// ExportDiff writes and the other way round:
//
//	"rbd diff v1\n"
//	'f' le32 len, from-snapshot name     (absent: since the image was empty)
//	't' le32 len, to-snapshot name       (absent: the head)
//	's' le64 size                        (the image's size at the end)
//	'w' le64 offset, le64 length, data   (bytes that changed)
//	'z' le64 offset, le64 length         (bytes that became zeros)
//	'e'                                  (end)

const diffMagic = "rbd diff v1\n"

// maxDiffName bounds a snapshot name in a diff; maxDiffData the bytes of
// one 'w' record ImportDiff accepts (ExportDiff writes at most a chunk).
const (
	maxDiffName = 4096
	maxDiffData = 64 << 20
)

// diffRecord is one record of a diff stream.
type diffRecord struct {
	Tag    byte   // 'f', 't', 's', 'w', 'z', 'e'
	Name   string // 'f', 't'
	Offset uint64 // 'w', 'z'; the size for 's'
	Length uint64 // 'w', 'z'
	Data   []byte // 'w'
}

// diffReader reads a diff stream record by record.
type diffReader struct {
	r      *bufio.Reader
	header bool
	ended  bool
}

func newDiffReader(r io.Reader) *diffReader { return &diffReader{r: bufio.NewReader(r)} }

// next returns the next record: io.EOF after 'e'; an error (wrapping
// ErrInvalid) for a stream that is not a diff or is cut short.
func (d *diffReader) next() (diffRecord, error) {
	if d.ended {
		return diffRecord{}, io.EOF
	}
	bad := func(format string, args ...any) (diffRecord, error) {
		return diffRecord{}, fmt.Errorf("%w: diff stream: %s (EINVAL)", ErrInvalid, fmt.Sprintf(format, args...))
	}
	if !d.header {
		magic := make([]byte, len(diffMagic))
		if _, err := io.ReadFull(d.r, magic); err != nil || string(magic) != diffMagic {
			return bad("no %q header", diffMagic[:len(diffMagic)-1])
		}
		d.header = true
	}
	tag, err := d.r.ReadByte()
	if err != nil {
		return bad("cut short before its end record")
	}
	rec := diffRecord{Tag: tag}
	u64 := func() (uint64, bool) {
		var b [8]byte
		_, err := io.ReadFull(d.r, b[:])
		return binary.LittleEndian.Uint64(b[:]), err == nil
	}
	switch tag {
	case 'f', 't':
		var b [4]byte
		if _, err := io.ReadFull(d.r, b[:]); err != nil {
			return bad("cut short in a snapshot name")
		}
		n := binary.LittleEndian.Uint32(b[:])
		if n == 0 || n > maxDiffName {
			return bad("snapshot name of %d bytes", n)
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(d.r, name); err != nil {
			return bad("cut short in a snapshot name")
		}
		rec.Name = string(name)
	case 's':
		var ok bool
		if rec.Offset, ok = u64(); !ok {
			return bad("cut short in the size")
		}
	case 'w', 'z':
		var ok1, ok2 bool
		rec.Offset, ok1 = u64()
		rec.Length, ok2 = u64()
		if !ok1 || !ok2 {
			return bad("cut short in a %q record", tag)
		}
		if rec.Offset+rec.Length < rec.Offset {
			return bad("%q record [%d,+%d) overflows", tag, rec.Offset, rec.Length)
		}
		if tag == 'w' {
			if rec.Length > maxDiffData {
				return bad("a data record of %d bytes (at most %d)", rec.Length, maxDiffData)
			}
			rec.Data = make([]byte, rec.Length)
			if _, err := io.ReadFull(d.r, rec.Data); err != nil {
				return bad("cut short in a data record")
			}
		}
	case 'e':
		d.ended = true
	default:
		return bad("unknown record %q", tag)
	}
	return rec, nil
}

// diffWriter writes a diff stream.
type diffWriter struct {
	w   *bufio.Writer
	err error
}

func newDiffWriter(w io.Writer) *diffWriter {
	d := &diffWriter{w: bufio.NewWriterSize(w, 1<<20)}
	_, d.err = d.w.WriteString(diffMagic)
	return d
}

func (d *diffWriter) put(b ...[]byte) {
	for _, x := range b {
		if d.err == nil {
			_, d.err = d.w.Write(x)
		}
	}
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func (d *diffWriter) name(tag byte, name string) {
	d.put([]byte{tag}, binary.LittleEndian.AppendUint32(nil, uint32(len(name))), []byte(name))
}
func (d *diffWriter) size(size uint64) { d.put([]byte{'s'}, le64(size)) }
func (d *diffWriter) data(off uint64, b []byte) {
	d.put([]byte{'w'}, le64(off), le64(uint64(len(b))), b)
}
func (d *diffWriter) zero(off, n uint64) { d.put([]byte{'z'}, le64(off), le64(n)) }
func (d *diffWriter) end() error {
	d.put([]byte{'e'})
	if d.err == nil {
		d.err = d.w.Flush()
	}
	return d.err
}

// ExportDiff writes to w what changed between snapshot fromSnap of the
// image ("": an empty image) and the image as it is open (the head, or
// the snapshot it is open at): the bytes that differ, as data or zero
// records, by 4 KiB blocks. Ranges neither holds data in are not read.
// p must hold the image (to open fromSnap).
func (img *Image) ExportDiff(ctx context.Context, fromSnap string, w io.Writer, o TransferOptions) error {
	var from *Image
	if fromSnap != "" {
		var err error
		if from, err = img.pool.open(ctx, img.name, OpenOptions{Snap: fromSnap}); err != nil {
			return err
		}
	}
	size := img.Size()
	var fromSize uint64
	if from != nil {
		fromSize = from.Size()
	}
	dw := newDiffWriter(w)
	if from != nil {
		dw.name('f', fromSnap)
	}
	if img.snap != nil {
		dw.name('t', img.snap.Name)
	}
	dw.size(size)
	// read returns [off, off+n) of im (zeros past its size), reading only
	// what it holds data in.
	read := func(ctx context.Context, im *Image, off, n uint64) ([]byte, bool, error) {
		buf := make([]byte, n)
		if im == nil || off >= im.Size() {
			return buf, false, nil
		}
		n = min(n, im.Size()-off)
		ext, err := im.AllocatedExtents(ctx, off, n)
		if err != nil {
			return nil, false, err
		}
		for _, e := range ext {
			if err := im.ReadAt(ctx, buf[e.Offset-off:e.Offset-off+e.Length], e.Offset); err != nil {
				return nil, false, err
			}
		}
		return buf, len(ext) > 0, nil
	}
	type result struct {
		to, from []byte
		err      error
	}
	n := int((size + transferChunk - 1) / transferChunk)
	slots := make([]chan result, n)
	for i := range slots {
		slots[i] = make(chan result, 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	sem := make(chan struct{}, TransferInFlight)
	var wg sync.WaitGroup
	started := make(chan struct{})
	defer func() {
		cancel()
		<-started
		wg.Wait()
	}()
	go func() {
		defer close(started)
		for i := range n {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				off := uint64(i) * transferChunk
				length := min(transferChunk, size-off)
				var r result
				var toData, fromData bool
				r.to, toData, r.err = read(ctx, img, off, length)
				if r.err == nil {
					r.from, fromData, r.err = read(ctx, from, off, length)
				}
				if r.err == nil && !toData && !fromData {
					r.to, r.from = nil, nil // nothing in either: nothing changed
				}
				slots[i] <- r
			}()
		}
	}()
	var done uint64
	for i := range n {
		var r result
		select {
		case r = <-slots[i]:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		<-sem
		if r.err != nil {
			return fmt.Errorf("rbd: export-diff %q: %w", img.name, r.err)
		}
		off := uint64(i) * transferChunk
		for b := 0; b < len(r.to); {
			e := min(b+zeroBlock, len(r.to))
			// A block past the old end is new: zeros there need no record
			// (growing the image zero-fills it).
			past := off+uint64(b) >= fromSize
			if bytes.Equal(r.to[b:e], r.from[b:e]) || (past && allZero(r.to[b:e])) {
				b = e
				continue
			}
			zero := allZero(r.to[b:e])
			j := e
			for j < len(r.to) {
				k := min(j+zeroBlock, len(r.to))
				if bytes.Equal(r.to[j:k], r.from[j:k]) || allZero(r.to[j:k]) != zero {
					break
				}
				j = k
			}
			if zero {
				dw.zero(off+uint64(b), uint64(j-b))
			} else {
				dw.data(off+uint64(b), r.to[b:j])
			}
			b = j
		}
		if dw.err != nil {
			return fmt.Errorf("rbd: export-diff %q: write: %w", img.name, dw.err)
		}
		done += min(transferChunk, size-off)
		if o.Progress != nil {
			o.Progress(done)
		}
	}
	if err := dw.end(); err != nil {
		return fmt.Errorf("rbd: export-diff %q: write: %w", img.name, err)
	}
	return nil
}

// ImportDiff applies a diff stream from r to the image: it must have the
// diff's from-snapshot (if it names one; ErrNotFound otherwise); the
// image takes the diff's size, its data and zero records, and, if the
// diff names a to-snapshot, a snapshot of that name at the end.
func (img *Image) ImportDiff(ctx context.Context, r io.Reader, o TransferOptions) error {
	dr := newDiffReader(r)
	var to string
	var done uint64
	for {
		rec, err := dr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("rbd: import-diff %q: %w", img.name, err)
		}
		switch rec.Tag {
		case 'f':
			img.hmu.Lock()
			_, ok := img.h.Snap(rec.Name)
			img.hmu.Unlock()
			if !ok {
				return fmt.Errorf("%w: import-diff %q: the diff starts at snapshot %q, which the image does not have (ENOENT)", ErrNotFound, img.name, rec.Name)
			}
		case 't':
			to = rec.Name
			img.hmu.Lock()
			_, ok := img.h.Snap(to)
			img.hmu.Unlock()
			if ok {
				return fmt.Errorf("%w: import-diff %q: the diff ends at snapshot %q, which the image has already (EEXIST)", ErrExists, img.name, to)
			}
		case 's':
			if rec.Offset != img.Size() {
				if err := img.Resize(ctx, rec.Offset, ResizeOptions{AllowShrink: true}); err != nil {
					return fmt.Errorf("rbd: import-diff %q: %w", img.name, err)
				}
			}
		case 'w':
			if err := img.WriteAt(ctx, rec.Data, rec.Offset); err != nil {
				return fmt.Errorf("rbd: import-diff %q: %w", img.name, err)
			}
			done += rec.Length
		case 'z':
			if err := img.Discard(ctx, rec.Offset, rec.Length); err != nil {
				return fmt.Errorf("rbd: import-diff %q: %w", img.name, err)
			}
			done += rec.Length
		}
		if o.Progress != nil && (rec.Tag == 'w' || rec.Tag == 'z') {
			o.Progress(done)
		}
	}
	if to != "" {
		return img.SnapCreate(ctx, to)
	}
	return nil
}
