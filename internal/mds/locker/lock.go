package locker

// LockKind names one of an inode's locks. Each covers part of the inode
// and the capability bits of that part.
type LockKind int

// The inode's locks, each with its place among the capability bits.
const (
	LockAuth  LockKind = iota // mode, owner, group: the A bits
	LockLink                  // link count: the L bits
	LockXattr                 // extended attributes: the X bits
	LockFile                  // file data, size and times: the F bits
	numLocks
)

func (k LockKind) String() string {
	switch k {
	case LockAuth:
		return "auth"
	case LockLink:
		return "link"
	case LockXattr:
		return "xattr"
	case LockFile:
		return "file"
	}
	return "lock?"
}

// shift is the place of k's bits in Caps.
func (k LockKind) shift() uint { return locks[k].shift }

// mask is every bit of k.
func (k LockKind) mask() Caps { return locks[k].bits << k.shift() }

// changeBits are k's bits with which a client may change what k covers
// without the MDS: while any client holds one, the MDS's copy of the
// value may be stale.
func (k LockKind) changeBits() Caps {
	if k == LockFile {
		return FileExcl | FileWrite | FileBuffer | FileExtend
	}
	return gExcl << k.shift()
}

// LockState is a lock's stable state: which capability bits of the lock
// clients may hold, and whether the MDS may read or change the value
// itself.
type LockState int

// The stable states. Ceph's locks pass through transitional states
// between these (sync→mix and so on, while revocations are gathered);
// here a lock moves to its new state at once, and the gathering shows
// instead as bits that clients still implement but no longer hold as
// issued: a grant waits until no other client implements a conflicting
// bit, and a request waits until the bits it needs gone are acked.
const (
	// StateSync: the value is shared and read-only. Every client may
	// hold s (and, for the file lock, c and r, plus l if it opened with
	// O_LAZY): readers read from the OSDs and cache. The MDS reads the
	// value as it is (stat).
	StateSync LockState = iota
	// StateMix (file lock only): several clients with a writer among
	// them. Every client may hold r and w (and l), none c, b or s: all
	// I/O goes synchronously to the OSDs, which order it; size and mtime
	// are updated through the MDS.
	StateMix
	// StateExcl: one client, the loner, may hold every bit of the lock
	// (for the file lock: s x c r w b a l, so it caches, buffers writes
	// and updates size and mtime locally); the others none.
	StateExcl
	// StateLock: the MDS changes the value itself (setattr): no client
	// holds any bit of the lock.
	StateLock
)

func (s LockState) String() string {
	switch s {
	case StateSync:
		return "sync"
	case StateMix:
		return "mix"
	case StateExcl:
		return "excl"
	case StateLock:
		return "lock"
	}
	return "state?"
}

// allowed returns the bits of lock k that a client may hold in state s;
// loner says whether the client is the lock's loner (StateExcl).
func allowed(k LockKind, s LockState, loner bool) Caps {
	var g Caps
	switch s {
	case StateSync:
		g = gShared
		if k == LockFile {
			g |= gCache | gRead | gLazy
		}
	case StateMix:
		if k == LockFile {
			g = gRead | gWrite | gLazy
		}
	case StateExcl:
		if loner {
			g = locks[k].bits
		}
	case StateLock:
	}
	return g << k.shift()
}

// lockState is one lock of one inode.
type lockState struct {
	state LockState
	loner ClientID // the client that may hold everything in StateExcl
	// xlock is the request holding the lock exclusively (a setattr
	// between its reply and its Done), 0 if none.
	xlock ReqID
}

// LockMode says how a request needs a lock.
type LockMode int

const (
	// Rdlock: the request reads the value as the MDS has it, so no
	// client may hold a bit that changes it (the lock goes to sync and
	// writers flush first).
	Rdlock LockMode = iota + 1
	// Xlock: the request changes the value, so no client may hold any
	// bit of the lock (it goes to lock) until the request is done.
	Xlock
)

func (m LockMode) String() string {
	switch m {
	case Rdlock:
		return "rdlock"
	case Xlock:
		return "xlock"
	}
	return "mode?"
}
