package rados

import (
	"context"
	"sync/atomic"
	"time"
)

// Single-operation shortcuts over WriteOp and ReadOp, named as in
// go-ceph's rados package. Each returns once the operation is committed
// (writes) or answered (reads).

// ObjectStat is an object's size, modification time and version.
type ObjectStat struct {
	Size    uint64
	ModTime time.Time
	Version uint64
}

// Write writes data at offset of object name.
func (io *IOContext) Write(ctx context.Context, name string, data []byte, offset uint64) error {
	w := NewWriteOp()
	w.Write(data, offset)
	return io.OperateWrite(ctx, name, w)
}

// WriteFull replaces the data of object name with data.
func (io *IOContext) WriteFull(ctx context.Context, name string, data []byte) error {
	w := NewWriteOp()
	w.WriteFull(data)
	return io.OperateWrite(ctx, name, w)
}

// Append appends data to object name.
func (io *IOContext) Append(ctx context.Context, name string, data []byte) error {
	w := NewWriteOp()
	w.Append(data)
	return io.OperateWrite(ctx, name, w)
}

// WriteAsync starts a write of data at offset of object name; data must
// not change until the Completion is committed.
func (io *IOContext) WriteAsync(ctx context.Context, name string, data []byte, offset uint64) *Completion {
	w := NewWriteOp()
	w.Write(data, offset)
	return io.OperateWriteAsync(ctx, name, w)
}

// WriteFullAsync starts a replacement of the data of object name.
func (io *IOContext) WriteFullAsync(ctx context.Context, name string, data []byte) *Completion {
	w := NewWriteOp()
	w.WriteFull(data)
	return io.OperateWriteAsync(ctx, name, w)
}

// Create creates object name; if exclusive, it fails with ErrExists if
// the object exists.
func (io *IOContext) Create(ctx context.Context, name string, exclusive bool) error {
	w := NewWriteOp()
	w.Create(exclusive)
	return io.OperateWrite(ctx, name, w)
}

// Truncate sets the size of object name.
func (io *IOContext) Truncate(ctx context.Context, name string, size uint64) error {
	w := NewWriteOp()
	w.Truncate(size)
	return io.OperateWrite(ctx, name, w)
}

// Zero zeroes length bytes at offset of object name.
func (io *IOContext) Zero(ctx context.Context, name string, offset, length uint64) error {
	w := NewWriteOp()
	w.Zero(offset, length)
	return io.OperateWrite(ctx, name, w)
}

// Delete removes object name (ErrNotFound if it does not exist).
func (io *IOContext) Delete(ctx context.Context, name string) error {
	w := NewWriteOp()
	w.Remove()
	return io.OperateWrite(ctx, name, w)
}

// Read reads length bytes at offset of object name (length 0: to the
// end); fewer at the end of the object.
func (io *IOContext) Read(ctx context.Context, name string, offset, length uint64) ([]byte, error) {
	r := NewReadOp()
	st := r.Read(offset, length)
	if err := io.OperateRead(ctx, name, r); err != nil {
		return nil, err
	}
	return st.Data, nil
}

// ReadInto reads up to len(buf) bytes at offset of object name into buf
// and returns how many it read (fewer at the end of the object), as
// librados' rados_read does. Unlike Read it allocates nothing per call:
// the reply's buffer goes back to the client's messenger once copied.
func (io *IOContext) ReadInto(ctx context.Context, name string, offset uint64, buf []byte) (int, error) {
	r := NewReadOp()
	st := r.ReadInto(offset, buf)
	if err := io.OperateRead(ctx, name, r); err != nil {
		return 0, err
	}
	return len(st.Data), nil
}

// Buffer holds bytes read without a copy: Data is a slice of the OSD's
// reply as the client received it.
type Buffer struct {
	Data    []byte
	release atomic.Pointer[func()]
}

// Release hands the buffer's memory back to the client, which reuses it
// for later replies: Data must not be used after. Calling it more than
// once does nothing more. A Buffer never released is left to the
// garbage collector; releasing saves the client allocating (and zeroing)
// as much again for a later reply.
func (b *Buffer) Release() {
	if f := b.release.Swap(nil); f != nil {
		b.Data = nil
		(*f)()
	}
}

// ReadBuffer reads length bytes at offset (0: to the end) of object name
// as Read does, without copying them out of the reply, as librados' C++
// read into a bufferlist does. Release the Buffer once done with its
// Data. For large reads it is the cheapest way to read: ReadInto copies
// each reply, Read leaves every reply's memory to the garbage collector.
func (io *IOContext) ReadBuffer(ctx context.Context, name string, offset, length uint64) (*Buffer, error) {
	r := NewReadOp()
	st := r.Read(offset, length)
	b := &Buffer{}
	s := readSubmission(name, r)
	s.copies = false // the Buffer keeps the reply
	s.take = func(release func()) { b.release.Store(&release) }
	comp := io.start(ctx, s)
	if err := comp.waitOp(ctx); err != nil {
		return nil, err
	}
	b.Data = st.Data
	return b, nil
}

// ReadAsync starts a read of object name; the step holds the data once
// the Completion is committed without error.
func (io *IOContext) ReadAsync(ctx context.Context, name string, offset, length uint64) (*ReadStep, *Completion) {
	r := NewReadOp()
	st := r.Read(offset, length)
	return st, io.OperateReadAsync(ctx, name, r)
}

// Stat returns the size, modification time and version of object name.
func (io *IOContext) Stat(ctx context.Context, name string) (ObjectStat, error) {
	r := NewReadOp()
	st := r.Stat()
	c := io.start(ctx, readSubmission(name, r))
	if err := c.waitOp(ctx); err != nil {
		return ObjectStat{}, err
	}
	return ObjectStat{Size: st.Size, ModTime: st.ModTime, Version: c.Version()}, nil
}

// GetXattr returns an extended attribute of object name.
func (io *IOContext) GetXattr(ctx context.Context, name, attr string) ([]byte, error) {
	r := NewReadOp()
	st := r.GetXattr(attr)
	if err := io.OperateRead(ctx, name, r); err != nil {
		return nil, err
	}
	return st.Data, nil
}

// ListXattrs returns every extended attribute of object name.
func (io *IOContext) ListXattrs(ctx context.Context, name string) (map[string][]byte, error) {
	r := NewReadOp()
	st := r.GetXattrs()
	if err := io.OperateRead(ctx, name, r); err != nil {
		return nil, err
	}
	return st.Attrs, nil
}

// SetXattr sets an extended attribute of object name.
func (io *IOContext) SetXattr(ctx context.Context, name, attr string, value []byte) error {
	w := NewWriteOp()
	w.SetXattr(attr, value)
	return io.OperateWrite(ctx, name, w)
}

// RmXattr removes an extended attribute of object name.
func (io *IOContext) RmXattr(ctx context.Context, name, attr string) error {
	w := NewWriteOp()
	w.RmXattr(attr)
	return io.OperateWrite(ctx, name, w)
}

// SetOmap sets omap entries of object name.
func (io *IOContext) SetOmap(ctx context.Context, name string, pairs map[string][]byte) error {
	w := NewWriteOp()
	w.SetOmap(pairs)
	return io.OperateWrite(ctx, name, w)
}

// GetOmapValues returns up to max omap entries of object name after
// startAfter whose keys begin with prefix, and whether more follow.
func (io *IOContext) GetOmapValues(ctx context.Context, name, startAfter, prefix string, max uint64) ([]KeyValue, bool, error) {
	r := NewReadOp()
	st := r.GetOmapVals(startAfter, prefix, max)
	if err := io.OperateRead(ctx, name, r); err != nil {
		return nil, false, err
	}
	return st.Pairs, st.More, nil
}

// GetOmapValuesByKeys returns the omap entries of object name for the
// keys that exist.
func (io *IOContext) GetOmapValuesByKeys(ctx context.Context, name string, keys ...string) (map[string][]byte, error) {
	r := NewReadOp()
	st := r.GetOmapValsByKeys(keys...)
	if err := io.OperateRead(ctx, name, r); err != nil {
		return nil, err
	}
	return st.Map(), nil
}

// RmOmapKeys removes omap entries of object name.
func (io *IOContext) RmOmapKeys(ctx context.Context, name string, keys ...string) error {
	w := NewWriteOp()
	w.RmOmapKeys(keys)
	return io.OperateWrite(ctx, name, w)
}

// CleanOmap removes every omap entry of object name.
func (io *IOContext) CleanOmap(ctx context.Context, name string) error {
	w := NewWriteOp()
	w.ClearOmap()
	return io.OperateWrite(ctx, name, w)
}

// Exec calls an object-class method on object name and returns its
// output. The OSD decides from the method whether it writes. While the
// IOContext reads at a snapshot (SetReadSnap), a method that reads runs
// on the object as it was at the snapshot, and one that writes fails
// with ErrReadOnly.
func (io *IOContext) Exec(ctx context.Context, name, class, method string, in []byte) ([]byte, error) {
	w := NewWriteOp()
	st := w.Exec(class, method, in)
	if err := io.OperateWrite(ctx, name, w); err != nil {
		return nil, err
	}
	return st.Output, nil
}
