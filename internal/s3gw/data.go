package s3gw

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// Object data are striped files named by a random 64-bit data id: 4 MiB
// RADOS objects "s3.d.<id %016x>.<object number %08x>", so an object up
// to 4 MiB is one RADOS object and a larger one is striped. An overwrite
// writes under a new id, so readers of the old entry never see a mix.
func dataObjectName(id, objectNo uint64) string {
	return fmt.Sprintf("s3.d.%016x.%08x", id, objectNo)
}

// ioChunk is how much of a body is read before it is written out.
const ioChunk = 4 << 20

// writeData writes exactly size bytes of body (size < 0: up to EOF) as data
// id and returns how many and their MD5. A body that ends short is
// io.ErrUnexpectedEOF; one longer than size is not read past size.
func (g *Gateway) writeData(ctx context.Context, id uint64, body io.Reader, size int64, limit int64) (int64, []byte, error) {
	h := md5.New()
	buf := make([]byte, min(ioChunk, max(size, 0)+1))
	if size < 0 {
		buf = make([]byte, ioChunk)
	}
	var off int64
	for size < 0 || off < size {
		want := int64(len(buf))
		if size >= 0 {
			want = min(want, size-off)
		}
		n, err := io.ReadFull(body, buf[:want])
		if n > 0 {
			if off+int64(n) > limit {
				return off, nil, errEntityTooLarge
			}
			h.Write(buf[:n])
			if werr := g.data.WriteAt(ctx, id, buf[:n], uint64(off)); werr != nil {
				return off, nil, fmt.Errorf("write data %016x: %w", id, werr)
			}
			off += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if size >= 0 && off < size {
				return off, nil, io.ErrUnexpectedEOF
			}
			break
		}
		if err != nil {
			return off, nil, err
		}
	}
	// Read to the end: a signed payload's hash and an aws-chunked body's
	// last chunk are checked at EOF, before anything is committed.
	var one [1]byte
	for {
		n, err := body.Read(one[:])
		if n > 0 {
			return off, nil, errIncompleteBody.withMessage("The body is longer than its declared length of %d bytes.", size)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return off, nil, err
		}
	}
	return off, h.Sum(nil), nil
}

// removeData removes the data objects of the extents.
func (g *Gateway) removeData(ctx context.Context, xs ...meta.Extent) error {
	var errs []error
	for _, x := range xs {
		if err := g.data.Remove(ctx, x.ID, uint64(x.Size)); err != nil {
			errs = append(errs, fmt.Errorf("remove data %016x: %w", x.ID, err))
		}
	}
	return errors.Join(errs...)
}

// readData copies bytes [off, off+n) of an object made of extents to w.
func (g *Gateway) readData(ctx context.Context, w io.Writer, xs []meta.Extent, off, n int64) error {
	buf := make([]byte, min(n, ioChunk))
	var base int64
	for _, x := range xs {
		if n <= 0 {
			return nil
		}
		if off >= base+x.Size {
			base += x.Size
			continue
		}
		for pos := off - base; pos < x.Size && n > 0; {
			k := min(int64(len(buf)), x.Size-pos, n)
			got, err := g.data.Read(ctx, x.ID, buf[:k], uint64(pos), uint64(x.Size))
			if err != nil {
				return fmt.Errorf("read data %016x: %w", x.ID, err)
			}
			if _, err := w.Write(buf[:got]); err != nil {
				return err
			}
			pos += int64(got)
			off += int64(got)
			n -= int64(got)
		}
		base += x.Size
	}
	return nil
}
