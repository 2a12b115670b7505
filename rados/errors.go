package rados

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Error classes; test for them with errors.Is. An error from an OSD or a
// monitor is an *OpError that wraps the class of its errno (if it has
// one), so errors.As gives the errno of any failure.
var (
	// ErrNotFound: the object does not exist (ENOENT).
	ErrNotFound = errors.New("rados: not found")
	// ErrExists: the object (or pool) already exists (EEXIST).
	ErrExists = errors.New("rados: already exists")
	// ErrNoAttr: the extended attribute does not exist (ENODATA).
	ErrNoAttr = errors.New("rados: no such attribute")
	// ErrVersionMismatch: an AssertVersion failed: the object is newer
	// (ERANGE: the asserted version is older) or older (EOVERFLOW).
	ErrVersionMismatch = errors.New("rados: object version mismatch")
	// ErrCompareFailed: a CmpXattr or CmpOmap comparison failed
	// (ECANCELED); nothing was applied.
	ErrCompareFailed = errors.New("rados: comparison failed")
	// ErrPermission: the caller's capabilities do not allow the
	// operation (EPERM, EACCES).
	ErrPermission = errors.New("rados: permission denied")
	// ErrInvalid: the request is malformed (EINVAL).
	ErrInvalid = errors.New("rados: invalid argument")
	// ErrNotSupported: the OSD does not know the operation or the class
	// method (ENOTSUP).
	ErrNotSupported = errors.New("rados: operation not supported")
	// ErrTimedOut: the context's deadline passed before the operation
	// completed (it also matches context.DeadlineExceeded), or the
	// cluster answered ETIMEDOUT.
	ErrTimedOut = errors.New("rados: timed out")
	// ErrPoolNotFound: no pool has that name or id in the client's map.
	ErrPoolNotFound = errors.New("rados: pool not found")
	// ErrNoSpace: the cluster refused a write for lack of space
	// (ENOSPC): its pool is full (an OSD it uses is marked full), the
	// OSD is full, or its store is. Deletes still work, to free space.
	ErrNoSpace = errors.New("rados: no space")
	// ErrNotConnected: a watch was lost (ENOTCONN): it timed out on its
	// primary, or its object was deleted; watch again and re-read.
	ErrNotConnected = errors.New("rados: watch lost")
	// ErrReadOnly: the operation would change a snapshot (EROFS): a
	// class method that writes, called while the IOContext reads at a
	// snapshot (SetReadSnap); set SnapHead to call it on the head.
	ErrReadOnly = errors.New("rados: read-only snapshot")
	// ErrTooManyClones: the write would give its object more clones
	// than an object may have (EMLINK; 4,096, docs/SNAPSHOTS.md); remove
	// snapshots the object was written under, and the trimmer makes room.
	ErrTooManyClones = errors.New("rados: too many clones")
	// ErrClosed: the Conn is closed.
	ErrClosed = errors.New("rados: connection closed")
	// ErrBlocklisted: the cluster fenced this client (an entry in the OSD
	// map's blocklist matches its address and nonce): the OSDs refuse
	// everything it sends until the entry expires or is removed. Its
	// writes after the fence were not applied; open a new Conn (a new
	// instance) once whatever fenced it (an MDS that took its
	// capabilities, an operator) allows.
	ErrBlocklisted = errors.New("rados: blocklisted")
)

// OpError is a failure the cluster reported: the errno of an object
// operation (from the OSD) or of a monitor command.
type OpError struct {
	// Op names what failed: the op's name ("write", "cmpxattr") or the
	// monitor command's prefix.
	Op string
	// Object is the object's name, empty for monitor commands.
	Object string
	// Index is the position of the failed op in its compound operation
	// (-1 if unknown or not an object operation).
	Index int
	// Errno is the positive errno value (ENOENT = 2, ...).
	Errno int
	// Status is the monitor's message for monitor commands.
	Status string
}

func (e *OpError) Error() string {
	what := e.Op
	if e.Object != "" {
		what = fmt.Sprintf("%s %q", e.Op, e.Object)
	}
	name := wire.ErrnoName(int32(e.Errno))
	if e.Status != "" {
		return fmt.Sprintf("rados: %s: %s (%s)", what, e.Status, name)
	}
	if c := errnoClass(e.Errno); c != nil {
		return fmt.Sprintf("%s: %s (%s)", c, what, name)
	}
	return fmt.Sprintf("rados: %s: %s", what, name)
}

// Unwrap returns the error class of the errno, or nil.
func (e *OpError) Unwrap() error { return errnoClass(e.Errno) }

// errnoClass is the one table from errno to error class.
func errnoClass(errno int) error {
	switch errno {
	case wire.ENOENT:
		return ErrNotFound
	case wire.EEXIST:
		return ErrExists
	case wire.ENODATA:
		return ErrNoAttr
	case wire.ERANGE, wire.EOVERFLOW:
		return ErrVersionMismatch
	case wire.ECANCELED:
		return ErrCompareFailed
	case wire.EPERM, wire.EACCES:
		return ErrPermission
	case wire.EINVAL:
		return ErrInvalid
	case wire.ENOTSUP:
		return ErrNotSupported
	case wire.ETIMEDOUT:
		return ErrTimedOut
	case wire.ENOSPC:
		return ErrNoSpace
	case wire.ENOTCONN:
		return ErrNotConnected
	case wire.EROFS:
		return ErrReadOnly
	case wire.EMLINK:
		return ErrTooManyClones
	case wire.EBLOCKLISTED:
		return ErrBlocklisted
	}
	return nil
}

// replyError turns a failed OSD reply into an *OpError naming the op that
// failed.
func replyError(object string, ops []wire.ObjectOp, r *wire.OSDOpReply) error {
	if r.Result == 0 {
		return nil
	}
	e := &OpError{Object: object, Index: -1, Errno: int(-r.Result), Op: "op"}
	for i := range r.Ops {
		if r.Ops[i].Result != 0 && i < len(ops) {
			e.Index, e.Op = i, ops[i].Code.String()
			break
		}
	}
	if e.Index < 0 && len(ops) == 1 {
		e.Index, e.Op = 0, ops[0].Code.String()
	}
	return e
}

// explainNoSpace fills the Status of an ENOSPC error with why and what
// to do, from the client's map m: the reply carries only the errno.
// pool is the op's pool, osd the primary that refused it.
func explainNoSpace(err error, m *osdmap.Map, pool int64, osd int32) error {
	var e *OpError
	if !errors.As(err, &e) || e.Errno != wire.ENOSPC || m == nil {
		return err
	}
	const todo = "delete objects or add OSDs"
	ratio := osdmap.FormatRatio(m.Ratios().Full)
	p := m.Pool(pool)
	switch {
	case p != nil && p.Flags&osdmap.PoolFull != 0:
		var names []string
		for _, id := range m.PoolFullOSDs(p) {
			names = append(names, fmt.Sprintf("osd.%d", id))
		}
		what := "an OSD it uses is full"
		if len(names) > 0 {
			what = strings.Join(names, ", ") + " full"
		}
		e.Status = fmt.Sprintf("pool '%s' is full (%s, full_ratio %s); %s", p.Name, what, ratio, todo)
	case m.IsFull(osd):
		e.Status = fmt.Sprintf("osd.%d is full (full_ratio %s); %s", osd, ratio, todo)
	default:
		e.Status = fmt.Sprintf("osd.%d is out of space (its store is at or above full_ratio %s; the monitors will mark it full); %s", osd, ratio, todo)
	}
	return e
}

// opTimeoutError is the error of an op that Config.OpTimeout ended: it
// is ErrTimedOut and, as a context deadline would be, DeadlineExceeded.
// what says what the op waited for (opWait), if known.
func opTimeoutError(d time.Duration, what string) error {
	if what == "" {
		return fmt.Errorf("%w: no reply within the op timeout (%v): %w", ErrTimedOut, d, context.DeadlineExceeded)
	}
	return fmt.Errorf("%w: no reply within the op timeout (%v): %w; %s", ErrTimedOut, d, context.DeadlineExceeded, what)
}

// opWait is what an op that timed out was waiting for, from the
// client's map and, if they answered, the monitors.
type opWait struct {
	object    string
	epoch     uint64 // the client's map
	waitEpoch uint64 // the epoch the op waits for (after ESTALE), if newer
	hasPG     bool
	pg        osdmap.PG
	acting    []int32
	primary   int32 // -1: none up
	sent      bool  // sent to the primary, no reply yet
	state     string
}

// String tells it for people, with what to run next, e.g.
//
//	object "greeting" waited for pg 2.3 (acting [0], primary osd.0, in
//	the client's map epoch 12), which the monitors report
//	undersized+degraded+peered: see cuttle health detail and cuttle pg
//	query 2.3
func (w opWait) String() string {
	if !w.hasPG {
		return ""
	}
	var b strings.Builder
	if w.object != "" {
		fmt.Fprintf(&b, "object %q waited for ", w.object)
	} else {
		b.WriteString("the op waited for ")
	}
	fmt.Fprintf(&b, "pg %s (acting %s, ", w.pg, osdmap.FormatOSDs(w.acting))
	switch {
	case w.waitEpoch > w.epoch:
		fmt.Fprintf(&b, "for map epoch %d, the client has %d)", w.waitEpoch, w.epoch)
	case w.primary < 0:
		fmt.Fprintf(&b, "no primary up in the client's map epoch %d)", w.epoch)
	case w.sent:
		fmt.Fprintf(&b, "sent to primary osd.%d, in the client's map epoch %d)", w.primary, w.epoch)
	default:
		fmt.Fprintf(&b, "primary osd.%d, not reachable, in the client's map epoch %d)", w.primary, w.epoch)
	}
	if w.state != "" {
		fmt.Fprintf(&b, ", which the monitors report %s", w.state)
	}
	fmt.Fprintf(&b, ": see cuttle health detail and cuttle pg query %s", w.pg)
	return b.String()
}

// ctxError turns the end of a context into the package's errors: a
// deadline is ErrTimedOut (and context.DeadlineExceeded), a
// cancellation is context.Canceled (or its cause).
func ctxError(ctx context.Context) error {
	err := context.Cause(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimedOut, err)
	}
	return err
}

// explainBlocklisted fills the Status of an EBLOCKLISTED error with what
// happened and what to do; nonce is this client's instance.
func explainBlocklisted(err error, nonce uint64, epoch uint64) error {
	var e *OpError
	if !errors.As(err, &e) || e.Errno != wire.EBLOCKLISTED {
		return err
	}
	e.Status = fmt.Sprintf("this client (instance nonce %d) is in the OSD map's blocklist as of epoch %d: "+
		"the cluster fenced it and the OSDs apply nothing it sends; see `cuttle osd blocklist ls`, "+
		"and reconnect as a new client (or `cuttle osd blocklist rm ADDR`) once whatever fenced it allows", nonce, epoch)
	return err
}
