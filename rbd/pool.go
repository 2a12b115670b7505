package rbd

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	clsrbd "github.com/cuttlestore/cuttle/internal/cls/rbd"
	"github.com/cuttlestore/cuttle/rados"
	"github.com/cuttlestore/cuttle/striper/layout"
)

// Options tune a Pool and the Images it opens.
type Options struct {
	// MaxInFlight bounds the object operations one call of an image has
	// in flight at once (default 16).
	MaxInFlight int
	// Logger receives the exclusive lock's events (default: discard).
	Logger *slog.Logger
}

// Pool is the images of one pool: its directory, their id objects and
// headers. The data objects may live in another pool (a data pool).
type Pool struct {
	conn *rados.Conn
	io   *rados.IOContext
	opts Options
	log  *slog.Logger
}

// NewPool returns the images of the named pool, reached through conn.
func NewPool(conn *rados.Conn, pool string, opts Options) (*Pool, error) {
	io, err := conn.OpenIOContext(pool)
	if err != nil {
		return nil, fmt.Errorf("rbd: pool %q: %w", pool, err)
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 16
	}
	return &Pool{conn: conn, io: io, opts: opts, log: opts.logger()}, nil
}

// Conn returns the connection the pool's images are reached through.
func (p *Pool) Conn() *rados.Conn { return p.conn }

// Name returns the pool's name.
func (p *Pool) Name() string { return p.io.PoolName() }

// CreateOptions are the settings of a new image; zero fields take the
// defaults.
type CreateOptions struct {
	// Order is log2 of the object size, 16 (64 KiB) to 25 (32 MiB);
	// default 22 (4 MiB).
	Order uint8
	// StripeUnit is the bytes dealt to one object before the next
	// (default: the object size); a multiple of 64 KiB dividing it.
	StripeUnit uint64
	// StripeCount is how many objects a stripe spans (default 1).
	StripeCount uint64
	// DataPool names the pool of the data objects (default: the
	// image's pool). Its snapshots must be self-managed (a pool with
	// pool snapshots cannot hold images' snapshots).
	DataPool string
	// Features to enable beyond the default (layering, and object-map
	// for images of at most clsrbd.MaxObjectMapObjects objects).
	Features uint64
	// NoObjectMap creates the image without an object map.
	NoObjectMap bool
}

// DefaultOrder is the order of images created without one (4 MiB objects).
const DefaultOrder = 22

// checkName refuses names the CLI could not spell ("pool/image@snap").
func checkName(what, name string) error {
	if name == "" || len(name) > clsrbd.MaxNameLen || strings.ContainsAny(name, "/@\x00") {
		return fmt.Errorf("%w: %s name %q: want 1 to %d bytes without '/', '@' or NUL", ErrInvalid, what, name, clsrbd.MaxNameLen)
	}
	return nil
}

// newID returns a random image id: lower-case hexadecimal of a non-zero
// 64-bit number.
func newID() (string, error) {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("rbd: image id: %w", err)
		}
		if n := binary.LittleEndian.Uint64(b[:]); n != 0 {
			return strconv.FormatUint(n, 16), nil
		}
	}
}

// Create makes an image named name of size bytes. It is ErrExists if the
// pool has an image of that name, ErrInvalid for bad settings.
func (p *Pool) Create(ctx context.Context, name string, size uint64, o CreateOptions) error {
	return p.create(ctx, name, size, o, clsrbd.ParentSpec{}, nil)
}

// create is Create, of a clone of parent (in parentPool) if parent is
// not zero: the clone's header names it, and it lists the clone before
// the directory does.
func (p *Pool) create(ctx context.Context, name string, size uint64, o CreateOptions, parent clsrbd.ParentSpec, parentPool *Pool) error {
	if err := checkName("image", name); err != nil {
		return err
	}
	id, err := newID()
	if err != nil {
		return err
	}
	h := clsrbd.Header{Size: size, Order: o.Order, ObjectPrefix: clsrbd.DataPrefix + id, Features: clsrbd.FeatureLayering | o.Features,
		StripeUnit: o.StripeUnit, StripeCount: o.StripeCount, DataPool: clsrbd.NoDataPool, Parent: parent}
	if h.Order == 0 {
		h.Order = DefaultOrder
	}
	if h.StripeUnit == 0 && h.Order <= clsrbd.MaxOrder {
		h.StripeUnit = h.ObjectSize()
	}
	if h.StripeCount == 0 {
		h.StripeCount = 1
	}
	if h.StripeUnit != h.ObjectSize() || h.StripeCount != 1 {
		h.Features |= clsrbd.FeatureStripingV2
	}
	if o.DataPool != "" && o.DataPool != p.io.PoolName() {
		if h.DataPool, err = p.conn.LookupPool(o.DataPool); err != nil {
			return fmt.Errorf("rbd: create %q: data pool %q: %w", name, o.DataPool, err)
		}
	}
	if err := h.Validate(); err != nil {
		return fmt.Errorf("rbd: create %q: %w: %w", name, ErrInvalid, err)
	}
	if h.Order >= clsrbd.MinOrder && h.Order <= clsrbd.MaxOrder && !o.NoObjectMap {
		count := layout.Layout{ObjectSize: uint32(h.ObjectSize()), StripeUnit: uint32(h.StripeUnit), StripeCount: uint32(h.StripeCount)}.ObjectCount(size)
		if count <= clsrbd.MaxObjectMapObjects {
			h.Features |= clsrbd.FeatureObjectMap
		}
	}
	// The id object, created exclusively, claims the name; then the
	// header, then the directory entry that lists the image.
	w := rados.NewWriteOp()
	w.Create(true)
	w.WriteFull([]byte(id))
	if err := p.io.OperateWrite(ctx, clsrbd.IDPrefix+name, w); err != nil {
		if errors.Is(err, rados.ErrExists) {
			return fmt.Errorf("%w: image %q in pool %q (EEXIST)", ErrExists, name, p.Name())
		}
		return fmt.Errorf("rbd: create %q: %w", name, classify(err))
	}
	undo := func(err error, objects ...string) error {
		for _, o := range objects {
			_ = p.io.Delete(ctx, o) // best effort: the error returned says what failed
		}
		return fmt.Errorf("rbd: create %q: %w", name, classify(err))
	}
	// The object map before the header: an image never lacks one.
	if h.Features&clsrbd.FeatureObjectMap != 0 {
		count := layout.Layout{ObjectSize: uint32(h.ObjectSize()), StripeUnit: uint32(h.StripeUnit), StripeCount: uint32(h.StripeCount)}.ObjectCount(size)
		if err := p.io.WriteFull(ctx, clsrbd.ObjectMapName(id, 0), clsrbd.NewObjectMap(count).Encode()); err != nil {
			return undo(err, clsrbd.IDPrefix+name)
		}
	}
	if _, err := p.io.Exec(ctx, clsrbd.HeaderPrefix+id, clsrbd.Class, "create", h.Encode()); err != nil {
		return undo(err, clsrbd.ObjectMapName(id, 0), clsrbd.IDPrefix+name)
	}
	// A clone's header names its parent before the parent lists it: a
	// listed child whose header is gone (or names another parent) is
	// known stale.
	if !parent.IsZero() {
		if err := p.attach(ctx, parentPool, parent, id); err != nil {
			return undo(err, clsrbd.HeaderPrefix+id, clsrbd.ObjectMapName(id, 0), clsrbd.IDPrefix+name)
		}
	}
	if _, err := p.io.Exec(ctx, clsrbd.Directory, clsrbd.Class, "dir_add", clsrbd.DirRequest{Name: name, ID: id}.Encode()); err != nil {
		if !parent.IsZero() {
			_ = detachFrom(ctx, p.conn, parent, clsrbd.ChildSpec{PoolID: p.io.PoolID(), ImageID: id}) // best effort: a stale child is dropped at unprotect
		}
		return undo(err, clsrbd.HeaderPrefix+id, clsrbd.ObjectMapName(id, 0), clsrbd.IDPrefix+name)
	}
	return nil
}

// List returns the names of the pool's images, sorted.
func (p *Pool) List(ctx context.Context) ([]string, error) {
	var names []string
	after := ""
	for {
		kvs, more, err := p.io.GetOmapValues(ctx, clsrbd.Directory, after, clsrbd.NamePrefix, 1000)
		if errors.Is(err, rados.ErrNotFound) {
			return nil, nil
		} else if err != nil {
			return nil, fmt.Errorf("rbd: list pool %q: %w", p.Name(), classify(err))
		}
		for _, kv := range kvs {
			names = append(names, strings.TrimPrefix(kv.Key, clsrbd.NamePrefix))
		}
		if !more || len(kvs) == 0 {
			return names, nil
		}
		after = kvs[len(kvs)-1].Key
	}
}

// lookup returns the id of image name.
func (p *Pool) lookup(ctx context.Context, name string) (string, error) {
	if err := checkName("image", name); err != nil {
		return "", err
	}
	b, err := p.io.Read(ctx, clsrbd.IDPrefix+name, 0, 0)
	if errors.Is(err, rados.ErrNotFound) {
		return "", fmt.Errorf("%w: no image %q in pool %q (ENOENT)", ErrNotFound, name, p.Name())
	} else if err != nil {
		return "", fmt.Errorf("rbd: image %q: %w", name, classify(err))
	}
	id := string(b)
	if _, err := clsrbd.ParseID(id); err != nil {
		return "", fmt.Errorf("rbd: image %q: %w", name, err)
	}
	return id, nil
}

// header reads the header of image id.
func (p *Pool) header(ctx context.Context, name, id string) (clsrbd.Header, error) {
	out, err := p.io.Exec(ctx, clsrbd.HeaderPrefix+id, clsrbd.Class, "get", nil)
	if err != nil {
		return clsrbd.Header{}, fmt.Errorf("rbd: image %q header: %w", name, classify(err))
	}
	h, err := clsrbd.DecodeHeader(out)
	if err == nil {
		err = h.Validate()
	}
	if err != nil {
		return clsrbd.Header{}, fmt.Errorf("rbd: image %q header: %w", name, err)
	}
	if h.Features&^clsrbd.Features != 0 {
		return clsrbd.Header{}, fmt.Errorf("%w: image %q has features %#x this version does not know (ENOTSUP)", ErrUnsupported, name, h.Features&^clsrbd.Features)
	}
	return h, nil
}

// Remove removes image name: its data objects, then its header, id
// object and directory entry. It is ErrBusy while the image has
// snapshots (remove them first) or is open (its header has watchers),
// ErrNotFound if there is no such image.
func (p *Pool) Remove(ctx context.Context, name string) error {
	id, err := p.lookup(ctx, name)
	if err != nil {
		return err
	}
	// Not its parent: a clone whose parent cannot be opened can still go.
	img, err := p.openID(ctx, name, id, OpenOptions{}, 0)
	if err != nil {
		return err
	}
	if n := len(img.h.Snapshots); n > 0 {
		return fmt.Errorf("%w: image %q has %d snapshots; remove them first (EBUSY)", ErrBusy, name, n)
	}
	ws, err := p.io.ListWatchers(ctx, img.headerObject())
	if err != nil {
		return fmt.Errorf("rbd: remove %q: list watchers: %w", name, classify(err))
	}
	if len(ws) > 0 {
		return fmt.Errorf("%w: image %q is open by %d watchers (first %s); close it there, or wait for a dead client's watch to time out (30 s) (EBUSY)", ErrBusy, name, len(ws), ws[0].Client)
	}
	if err := img.st.Remove(ctx, img.ino, img.h.Size); err != nil {
		return fmt.Errorf("rbd: remove %q: data: %w", name, classify(err))
	}
	for _, step := range []func() error{
		func() error { return p.io.Delete(ctx, clsrbd.ObjectMapName(img.id, 0)) },
		func() error { return p.io.Delete(ctx, clsrbd.HeaderPrefix+img.id) },
		func() error { return p.io.Delete(ctx, clsrbd.IDPrefix+name) },
		func() error {
			_, err := p.io.Exec(ctx, clsrbd.Directory, clsrbd.Class, "dir_remove", clsrbd.DirRequest{Name: name, ID: img.id}.Encode())
			return err
		},
	} {
		if err := step(); err != nil && !errors.Is(err, rados.ErrNotFound) {
			return fmt.Errorf("rbd: remove %q: %w", name, classify(err))
		}
	}
	// A clone leaves its parent's list once its header is gone.
	if ps := img.h.Parent; !ps.IsZero() {
		if err := detachFrom(ctx, p.conn, ps, clsrbd.ChildSpec{PoolID: p.io.PoolID(), ImageID: img.id}); err != nil {
			return fmt.Errorf("rbd: remove %q: %w", name, err)
		}
	}
	return nil
}

// Rename renames image oldName to newName. It is ErrExists if newName is
// taken.
func (p *Pool) Rename(ctx context.Context, oldName, newName string) error {
	id, err := p.lookup(ctx, oldName)
	if err != nil {
		return err
	}
	if err := checkName("image", newName); err != nil {
		return err
	}
	w := rados.NewWriteOp()
	w.Create(true)
	w.WriteFull([]byte(id))
	if err := p.io.OperateWrite(ctx, clsrbd.IDPrefix+newName, w); err != nil {
		if errors.Is(err, rados.ErrExists) {
			return fmt.Errorf("%w: image %q in pool %q (EEXIST)", ErrExists, newName, p.Name())
		}
		return fmt.Errorf("rbd: rename %q: %w", oldName, classify(err))
	}
	if _, err := p.io.Exec(ctx, clsrbd.Directory, clsrbd.Class, "dir_rename", clsrbd.DirRequest{Name: oldName, NewName: newName, ID: id}.Encode()); err != nil {
		_ = p.io.Delete(ctx, clsrbd.IDPrefix+newName) // best effort: the error returned says what failed
		return fmt.Errorf("rbd: rename %q to %q: %w", oldName, newName, classify(err))
	}
	if err := p.io.Delete(ctx, clsrbd.IDPrefix+oldName); err != nil {
		return fmt.Errorf("rbd: rename %q: %w", oldName, classify(err))
	}
	return nil
}

// Stat returns the information of image name (Image.Stat without
// keeping it open).
func (p *Pool) Stat(ctx context.Context, name string) (Info, error) {
	img, err := p.open(ctx, name, OpenOptions{ReadOnly: true})
	if err != nil {
		return Info{}, err
	}
	return img.Stat(), nil
}
