package snaps

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/osdmap"
)

// ErrInvalidContext classes a malformed snap context from a client; the
// OSD answers EINVAL.
var ErrInvalidContext = errors.New("snaps: invalid snap context")

// MaxContextSnaps bounds the snapshots of one snap context, so that a
// client cannot make the OSD hold an unbounded list.
const MaxContextSnaps = osdmap.MaxPoolSnaps

// Context is a snap context (Ceph's SnapContext): Seq, the newest
// snapshot id the writer knows of, and Snaps, the live snapshots' ids,
// newest first. A write under it preserves, for each of Snaps newer than
// the object's last write, the object as it was.
type Context struct {
	Seq   uint64
	Snaps []uint64
}

// Empty reports whether c names no snapshot and no seq: writes under it
// never clone.
func (c Context) Empty() bool { return c.Seq == 0 && len(c.Snaps) == 0 }

// Validate checks c as Ceph's SnapContext::is_valid does: ids strictly
// decreasing, none 0 or special, none above Seq. A failure wraps
// ErrInvalidContext.
func (c Context) Validate() error {
	if c.Seq >= osdmap.MaxSnapID {
		return fmt.Errorf("%w: seq %#x is not a snap id", ErrInvalidContext, c.Seq)
	}
	if len(c.Snaps) > MaxContextSnaps {
		return fmt.Errorf("%w: %d snaps exceed %d", ErrInvalidContext, len(c.Snaps), MaxContextSnaps)
	}
	for i, s := range c.Snaps {
		switch {
		case s == 0:
			return fmt.Errorf("%w: snap id 0", ErrInvalidContext)
		case s > c.Seq:
			return fmt.Errorf("%w: snap %d above seq %d", ErrInvalidContext, s, c.Seq)
		case i > 0 && s >= c.Snaps[i-1]:
			return fmt.Errorf("%w: snaps not newest first (%d after %d)", ErrInvalidContext, s, c.Snaps[i-1])
		}
	}
	return nil
}

// ForWrite returns the snap context a write to pool p runs under, given
// the one the client sent (Ceph's do_op): a malformed client context is
// refused (ErrInvalidContext) in either mode; in pool-snaps mode the
// pool's context from the map replaces the client's; in self-managed
// mode the client's is used without the snapshots the pool has removed
// (Ceph's filter_snapc), so that no clone is made for them.
func ForWrite(p *osdmap.Pool, client Context) (Context, error) {
	if err := client.Validate(); err != nil {
		return Context{}, err
	}
	if p.PoolSnapsMode() {
		seq, snaps := p.SnapContext()
		return Context{Seq: seq, Snaps: snaps}, nil
	}
	if len(p.RemovedSnaps) == 0 {
		return client, nil
	}
	out := Context{Seq: client.Seq}
	for _, s := range client.Snaps {
		if !p.RemovedSnaps.Contains(s) {
			out.Snaps = append(out.Snaps, s)
		}
	}
	return out, nil
}
