package locker

import (
	"errors"
	"slices"
	"time"
)

// ClientID names a client session (Ceph's client.N).
type ClientID uint64

// Ino is an inode number.
type Ino uint64

// Rank is an MDS rank, the owner of a subtree.
type Rank int32

// ReqID names a metadata request (unique per Locker while it waits or
// holds a lock).
type ReqID uint64

// Sentinel errors.
var (
	// ErrBadCaps: a caps string that is not in Ceph's notation.
	ErrBadCaps = errors.New("locker: bad caps notation")
	// ErrBusy: an inode's cap state cannot be exported while requests
	// wait on it or hold its locks.
	ErrBusy = errors.New("locker: inode busy")
	// ErrUnknownInode: no cap state for that inode here.
	ErrUnknownInode = errors.New("locker: inode not here")
	// ErrAlreadyHere: an import of an inode that has cap state here.
	ErrAlreadyHere = errors.New("locker: inode already here")
)

// Config holds the Locker's timeouts.
type Config struct {
	// RevokeWarn is how long a client may take to acknowledge a
	// revocation before it is reported (ActionLaggy, the health check
	// "clients failing to respond to capability release"; Ceph's
	// mds_revoke_cap_timeout). Zero means 60 s.
	RevokeWarn time.Duration
	// RevokeEvict, if not zero, is how long after a revocation a client
	// that has not acknowledged it is dropped and, if it held write
	// caps, blocklisted (Ceph's mds_cap_revoke_eviction_timeout, off by
	// default). Zero leaves eviction to the session timeout.
	RevokeEvict time.Duration
}

func (c Config) withDefaults() Config {
	if c.RevokeWarn <= 0 {
		c.RevokeWarn = 60 * time.Second
	}
	if c.RevokeEvict < 0 {
		c.RevokeEvict = 0
	}
	return c
}

// FileAttrs are the inode fields clients may change under caps and
// flush back: the size and the modification time.
type FileAttrs struct {
	Size  uint64
	Mtime time.Time
}

// Flush is the dirty metadata a client sends with an ack or a release:
// the size and mtime it changed, the bits it changed them under, and
// the flush's transaction id, answered by ActionFlushAck once the MDS
// has it.
type Flush struct {
	TID   uint64
	Size  uint64
	Mtime time.Time
	// Dirty are the caps under which the client changed size and mtime:
	// with Fx its size is the size (it knew the size and may have
	// truncated locally); with only Fw, Fb or Fa its size counts only
	// where it is larger (it extended the file).
	Dirty Caps
}

// revocation is one revoke message not yet acknowledged.
type revocation struct {
	seq      uint64
	bits     Caps // what this message took away
	sent     time.Time
	reported bool // reported as laggy already
}

// Capability is one client's capability on one inode, as the MDS keeps
// it. Issued is what the MDS currently grants; Implemented is Issued
// plus what revocations not yet acknowledged took away (what the client
// may still be using); Wanted is what the client asked for.
type Capability struct {
	// ID names this cap among all the client's caps on the inode, past
	// and present (Ceph's cap_id): a message, ack or release names it,
	// so one about a cap released since is not taken for a newer one.
	// It holds the rank that made it in its low 16 bits, so caps made
	// by different ranks never share one when an inode moves.
	ID          uint64
	Issued      Caps
	Implemented Caps
	Wanted      Caps
	// Lazy: the client opened the file with O_LAZY.
	Lazy bool
	// Seq counts the cap messages sent to the client (grants and
	// revokes); an ack names the Seq of the message it answers.
	Seq uint64
	// IssueSeq is the Seq of the last message that granted new bits: a
	// release naming an older IssueSeq crossed a grant and is ignored.
	IssueSeq uint64
	// LastFlushTID is the highest flush transaction applied.
	LastFlushTID uint64
	revokes      []revocation
	// fencing: the client's session ended while it could write; the cap
	// keeps what it implemented, blocking conflicting grants, until the
	// client is fenced (Fenced).
	fencing bool
}

// Fencing reports whether the cap belongs to a session that ended and
// waits for its client to be fenced.
func (c *Capability) Fencing() bool { return c.fencing }

// Revoking returns the bits being revoked and not yet acknowledged.
func (c *Capability) Revoking() Caps { return c.Implemented &^ c.Issued }

// RevokeSince returns when the oldest unacknowledged revocation was
// sent, and false if none is.
func (c *Capability) RevokeSince() (time.Time, bool) {
	if len(c.revokes) == 0 {
		return time.Time{}, false
	}
	return c.revokes[0].sent, true
}

// Request is a metadata operation that needs some of an inode's locks.
type Request struct {
	ID     ReqID
	Client ClientID
	Ino    Ino
	Op     Op
	// Fields are, for a stat or statlite, the fields that must be exact
	// (a stat asks for all); for a setattr, the fields it changes.
	Fields Field
}

// Op is a request's kind.
type Op int

// Request kinds.
const (
	// OpStat reads attributes: each field asked for takes a rdlock on
	// its lock (size and mtime: the file lock, so writers flush first).
	OpStat Op = iota + 1
	// OpSetattr changes attributes: each field takes an xlock on its
	// lock until Done.
	OpSetattr
)

func (o Op) String() string {
	switch o {
	case OpStat:
		return "stat"
	case OpSetattr:
		return "setattr"
	}
	return "op?"
}

// Field is a set of inode attributes, each covered by one lock.
type Field uint32

// Attributes.
const (
	FieldMode   Field = 1 << iota // auth lock
	FieldOwner                    // uid and gid: auth lock
	FieldNlink                    // link lock
	FieldXattrs                   // xattr lock
	FieldSize                     // file lock
	FieldMtime                    // file lock
	FieldAtime                    // file lock

	// FieldsAll are every field: a plain stat.
	FieldsAll = FieldMode | FieldOwner | FieldNlink | FieldXattrs | FieldSize | FieldMtime | FieldAtime
	// FieldsFile are the fields the file lock covers.
	FieldsFile = FieldSize | FieldMtime | FieldAtime
)

// lockOf returns the lock that covers f (a single field).
func lockOf(f Field) LockKind {
	switch f {
	case FieldMode, FieldOwner:
		return LockAuth
	case FieldNlink:
		return LockLink
	case FieldXattrs:
		return LockXattr
	}
	return LockFile
}

// needs returns the mode r needs each lock in (0: not at all).
func (r *Request) needs() [numLocks]LockMode {
	var out [numLocks]LockMode
	mode := Rdlock
	if r.Op == OpSetattr {
		mode = Xlock
	}
	for f := Field(1); f <= FieldAtime; f <<= 1 {
		if r.Fields&f != 0 {
			out[lockOf(f)] = mode
		}
	}
	return out
}

// inode is the cap state of one inode.
type inode struct {
	attrs   FileAttrs
	caps    map[ClientID]*Capability
	order   []ClientID    // the keys of caps, in order
	list    []*Capability // caps[order[i]], for walks without lookups
	locks   [numLocks]lockState
	waiting []*Request // in arrival order
}

// Locker is the capability and lock state of the inodes one MDS rank is
// the authority for.
type Locker struct {
	cfg     Config
	rank    Rank
	inodes  map[Ino]*inode
	clients map[ClientID]map[Ino]struct{}
	// lastCapID is the last Capability.ID given out.
	lastCapID uint64
	// revoking are the inodes where some cap has a revocation not yet
	// acked: what Tick looks at, rather than every cap in the cache.
	revoking map[Ino]struct{}
}

// New returns an empty Locker for rank.
func New(rank Rank, cfg Config) *Locker {
	return &Locker{
		cfg:      cfg.withDefaults(),
		rank:     rank,
		inodes:   map[Ino]*inode{},
		clients:  map[ClientID]map[Ino]struct{}{},
		revoking: map[Ino]struct{}{},
	}
}

// Rank returns the rank whose inodes this Locker holds.
func (l *Locker) Rank() Rank { return l.rank }

// Cap returns a copy of client's capability on ino, and false if it has
// none.
func (l *Locker) Cap(ino Ino, client ClientID) (Capability, bool) {
	in := l.inodes[ino]
	if in == nil || in.caps[client] == nil {
		return Capability{}, false
	}
	c := *in.caps[client]
	c.revokes = slices.Clone(c.revokes)
	return c, true
}

// LockState returns the state of ino's lock k and its loner (0 when
// not in StateExcl).
func (l *Locker) LockState(ino Ino, k LockKind) (LockState, ClientID) {
	in := l.inodes[ino]
	if in == nil {
		return StateSync, 0
	}
	return in.locks[k].state, in.locks[k].loner
}

// Attrs returns what the MDS knows of ino's size and mtime.
func (l *Locker) Attrs(ino Ino) FileAttrs {
	if in := l.inodes[ino]; in != nil {
		return in.attrs
	}
	return FileAttrs{}
}

// Clients returns the clients with caps on ino, in order.
func (l *Locker) Clients(ino Ino) []ClientID {
	in := l.inodes[ino]
	if in == nil {
		return nil
	}
	return slices.Clone(in.clientOrder())
}

// Inodes returns the inodes with cap state here, in order.
func (l *Locker) Inodes() []Ino {
	out := make([]Ino, 0, len(l.inodes))
	for ino := range l.inodes {
		out = append(out, ino)
	}
	slices.Sort(out)
	return out
}

// Load gives the Locker an inode's size and mtime as the MDS's cache has
// them, when the inode comes into the cache. It changes nothing if the
// inode already has cap state here (the flushed values are newer).
func (l *Locker) Load(ino Ino, attrs FileAttrs) {
	if l.inodes[ino] == nil {
		in := l.inode(ino)
		in.attrs = attrs
	}
}

func (l *Locker) inode(ino Ino) *inode {
	in := l.inodes[ino]
	if in == nil {
		in = &inode{caps: map[ClientID]*Capability{}}
		l.inodes[ino] = in
	}
	return in
}

// clientOrder returns the clients with caps in order. The slice is the
// inode's own: callers must not change it, nor keep it across a change
// of the caps.
func (in *inode) clientOrder() []ClientID { return in.order }

// setCap adds client's cap.
func (in *inode) setCap(client ClientID, cp *Capability) {
	i, found := slices.BinarySearch(in.order, client)
	if found {
		in.list[i] = cp
	} else {
		in.order = slices.Insert(in.order, i, client)
		in.list = slices.Insert(in.list, i, cp)
	}
	in.caps[client] = cp
}

// delCap removes client's cap.
func (in *inode) delCap(client ClientID) {
	if i, found := slices.BinarySearch(in.order, client); found {
		in.order = slices.Delete(in.order, i, i+1)
		in.list = slices.Delete(in.list, i, i+1)
	}
	delete(in.caps, client)
}

// Drop forgets ino's state when the MDS evicts the inode from its cache;
// it refuses (false) while a client holds caps on it or a request waits
// on or holds one of its locks.
func (l *Locker) Drop(ino Ino) bool {
	in := l.inodes[ino]
	if in == nil {
		return true
	}
	if len(in.caps) != 0 || len(in.waiting) != 0 || in.anyXlock() {
		return false
	}
	delete(l.inodes, ino)
	return true
}

func (in *inode) anyXlock() bool {
	for _, lk := range in.locks {
		if lk.xlock != 0 {
			return true
		}
	}
	return false
}

func (l *Locker) track(client ClientID, ino Ino) {
	m := l.clients[client]
	if m == nil {
		m = map[Ino]struct{}{}
		l.clients[client] = m
	}
	m[ino] = struct{}{}
}

func (l *Locker) untrack(client ClientID, ino Ino) {
	if m := l.clients[client]; m != nil {
		delete(m, ino)
		if len(m) == 0 {
			delete(l.clients, client)
		}
	}
}
