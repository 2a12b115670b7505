package striper

import (
	"context"
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Options tune a Striper.
type Options struct {
	// MaxInFlight bounds the object operations one call has in flight
	// at once (default 16).
	MaxInFlight int
}

// Striper does the object I/O of files of one layout in one pool.
type Striper struct {
	io     *rados.IOContext
	layout layout.Layout
	max    int
}

// New returns a Striper of files with layout l whose objects live in io,
// which must be opened on l's pool and namespace.
func New(io *rados.IOContext, l layout.Layout, opts Options) (*Striper, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("striper: %w", err)
	}
	if io.PoolID() != l.Pool || io.Namespace() != l.Namespace {
		return nil, fmt.Errorf("striper: %w: the layout's pool %d namespace %q is not the I/O context's (pool %d namespace %q); open an I/O context on the layout's pool",
			layout.ErrInvalid, l.Pool, l.Namespace, io.PoolID(), io.Namespace())
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 16
	}
	return &Striper{io: io, layout: l, max: opts.MaxInFlight}, nil
}

// Layout returns the striper's layout.
func (s *Striper) Layout() layout.Layout { return s.layout }

// pending is an object operation in flight, and what to do with its
// result once complete.
type pending struct {
	comp *rados.Completion
	done func(error) error
}

// window runs n object operations, at most max at a time: start(i)
// submits the i-th. It returns the first error (after the operations in
// flight have completed, so that no buffer is still in use).
func (s *Striper) window(n int, start func(i int) pending) error {
	var inflight []pending
	var first error
	wait := func(p pending) {
		// The op watches ctx itself, so it ends when ctx does; waiting
		// for its end (not for ctx) means no op still uses a buffer of
		// the caller's once the call returns.
		<-p.comp.Committed()
		err := p.comp.Err()
		if p.done != nil {
			err = p.done(err)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	for i := 0; i < n && first == nil; i++ {
		if len(inflight) == s.max {
			wait(inflight[0])
			inflight = inflight[1:]
			if first != nil {
				break
			}
		}
		inflight = append(inflight, start(i))
	}
	for _, p := range inflight {
		wait(p)
	}
	return first
}

// WriteAt writes data at offset off of file ino, and returns once every
// object write has committed. Objects past the end are created; nothing
// records the file's new size (the caller does).
func (s *Striper) WriteAt(ctx context.Context, ino uint64, data []byte, off uint64) error {
	extents := s.layout.FileToExtents(off, uint64(len(data)))
	err := s.window(len(extents), func(i int) pending {
		x := extents[i]
		buf := gather(data, x)
		return pending{comp: s.io.WriteAsync(ctx, layout.ObjectName(ino, x.ObjectNo), buf, x.Offset)}
	})
	if err != nil {
		return fmt.Errorf("striper: write %#x [%d,+%d): %w", ino, off, len(data), err)
	}
	return nil
}

// gather returns the bytes of data that object extent x holds: a slice of
// data if they are contiguous in it, else a copy.
func gather(data []byte, x layout.ObjectExtent) []byte {
	if len(x.Buffer) == 1 {
		b := x.Buffer[0]
		return data[b.Offset : b.Offset+b.Length]
	}
	buf := make([]byte, 0, x.Length)
	for _, b := range x.Buffer {
		buf = append(buf, data[b.Offset:b.Offset+b.Length]...)
	}
	return buf
}

// ReadAt fills buf with the bytes at offset off of file ino: holes
// (missing objects, and the parts of objects never written or cut by a
// truncate) read as zeros.
func (s *Striper) ReadAt(ctx context.Context, ino uint64, buf []byte, off uint64) error {
	extents := s.layout.FileToExtents(off, uint64(len(buf)))
	err := s.window(len(extents), func(i int) pending {
		x := extents[i]
		name := layout.ObjectName(ino, x.ObjectNo)
		r := rados.NewReadOp()
		if len(x.Buffer) == 1 {
			b := x.Buffer[0]
			dst := buf[b.Offset : b.Offset+b.Length]
			st := r.ReadInto(x.Offset, dst)
			return pending{comp: s.io.OperateReadAsync(ctx, name, r), done: func(err error) error {
				if errors.Is(err, rados.ErrNotFound) {
					clear(dst)
					return nil
				}
				if err == nil {
					clear(dst[len(st.Data):])
				}
				return err
			}}
		}
		st := r.Read(x.Offset, x.Length)
		return pending{comp: s.io.OperateReadAsync(ctx, name, r), done: func(err error) error {
			var got []byte
			switch {
			case errors.Is(err, rados.ErrNotFound):
			case err != nil:
				return err
			default:
				got = st.Data
			}
			for _, b := range x.Buffer {
				dst := buf[b.Offset : b.Offset+b.Length]
				clear(dst[copy(dst, got):])
				got = got[min(uint64(len(got)), b.Length):]
			}
			return nil
		}}
	})
	if err != nil {
		return fmt.Errorf("striper: read %#x [%d,+%d): %w", ino, off, len(buf), err)
	}
	return nil
}

// Read reads into buf the bytes at offset off of file ino, a file of size
// bytes: it returns how many it read, fewer than len(buf) (0 at or past
// the end) where the file ends before buf does.
func (s *Striper) Read(ctx context.Context, ino uint64, buf []byte, off, size uint64) (int, error) {
	if off >= size {
		return 0, nil
	}
	n := min(uint64(len(buf)), size-off)
	if err := s.ReadAt(ctx, ino, buf[:n], off); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Truncate cuts file ino from oldSize bytes to newSize: objects wholly
// past newSize are removed and the ones it cuts are truncated (objects
// that do not exist stay absent), so that bytes past newSize read as
// zeros if the file grows again. Growing (newSize ≥ oldSize) needs no
// object I/O: the new bytes are a hole.
func (s *Striper) Truncate(ctx context.Context, ino, oldSize, newSize uint64) error {
	if newSize >= oldSize {
		return nil
	}
	l := s.layout
	// Objects of the object sets before the one holding newSize's last
	// byte are full either way.
	var first uint64
	if newSize > 0 {
		no, _, _ := l.Locate(newSize - 1)
		first = no / uint64(l.StripeCount) * uint64(l.StripeCount)
	}
	count := l.ObjectCount(oldSize)
	var todo []uint64
	for no := first; no < count; no++ {
		if l.ObjectLen(newSize, no) != l.ObjectLen(oldSize, no) {
			todo = append(todo, no)
		}
	}
	err := s.window(len(todo), func(i int) pending {
		no := todo[i]
		w := rados.NewWriteOp()
		if keep := l.ObjectLen(newSize, no); keep == 0 {
			w.Remove()
		} else {
			w.AssertExists()
			w.Truncate(keep)
		}
		return pending{comp: s.io.OperateWriteAsync(ctx, layout.ObjectName(ino, no), w), done: ignoreNotFound}
	})
	if err != nil {
		return fmt.Errorf("striper: truncate %#x from %d to %d: %w", ino, oldSize, newSize, err)
	}
	return nil
}

// Remove removes every object of file ino, a file of size bytes (objects
// that do not exist are no error).
func (s *Striper) Remove(ctx context.Context, ino, size uint64) error {
	nos := make([]uint64, s.layout.ObjectCount(size))
	for i := range nos {
		nos[i] = uint64(i)
	}
	if err := s.RemoveObjects(ctx, ino, nos); err != nil {
		return fmt.Errorf("striper: remove %#x of %d bytes: %w", ino, size, err)
	}
	return nil
}

// RemoveObjects removes objects nos of file ino (objects that do not
// exist are no error): for callers that free parts of a file by object,
// as the MDS journal's trim does.
func (s *Striper) RemoveObjects(ctx context.Context, ino uint64, nos []uint64) error {
	err := s.window(len(nos), func(i int) pending {
		w := rados.NewWriteOp()
		w.Remove()
		return pending{comp: s.io.OperateWriteAsync(ctx, layout.ObjectName(ino, nos[i]), w), done: ignoreNotFound}
	})
	if err != nil {
		return fmt.Errorf("striper: remove objects of %#x: %w", ino, err)
	}
	return nil
}

func ignoreNotFound(err error) error {
	if errors.Is(err, rados.ErrNotFound) {
		return nil
	}
	return err
}
