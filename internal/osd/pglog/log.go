package pglog

import (
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// Kind is what a log entry did to its object.
type Kind uint8

// Entry kinds.
const (
	Modify Kind = 1 // the object was created or changed
	Delete Kind = 2 // the object was removed
)

func (k Kind) String() string {
	switch k {
	case Modify:
		return "modify"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Entry is one write of the PG.
type Entry struct {
	Version wire.Version // assigned by the primary; strictly increasing
	Prior   wire.Version // the object's version before (zero if it did not exist)
	Kind    Kind
	Object  objid.ID
	Req     wire.ReqID
	Result  int32 // what the client was told (0, or a negated errno)
}

// Log is a PG's recent entries in version order, and the version before
// the first of them (the tail). Entries older than the tail have been
// trimmed. Lookup finds an entry by request id.
//
// An OSD keeps thousands of entries per PG (3,000 by default, times its
// hundreds of PGs), and the garbage collector scans every pointer the
// heap holds at each collection: kept as Entry values, with their
// strings and a map keyed by request ids, the logs of an OSD that had
// run a while were most of its pointers, and collections took up to 45%
// of its CPU under large reads. So the log holds no pointers: each entry
// is packed into fixed fields and the offset of its strings in one byte
// arena, and requests are found through a hash of the client's name.
type Log struct {
	tail    wire.Version
	entries []packed
	// arena holds the entries' strings; arenaBase is the absolute offset
	// of arena[0] (packed.at is absolute), which grows as trimmed
	// entries' bytes are dropped from the front.
	arena     []byte
	arenaBase int
	byReq     map[reqKey]int // index into entries, offset by trimmed
	trimmed   int            // entries dropped from the front since the start
	seed      maphash.Seed
}

// packed is an Entry without pointers: its strings are the arena's
// bytes from at, in the order namespace, key, name, client.
type packed struct {
	version, prior         wire.Version
	pool                   int64
	snap, incarnation, tid uint64
	at                     int
	ns, key, name, client  uint32 // lengths
	hash                   uint32
	result                 int32
	kind                   Kind
}

// reqKey finds an entry by request id without a pointer: a collision of
// client hashes is caught by comparing the entry's client name.
type reqKey struct {
	client           uint64
	incarnation, tid uint64
}

// NewLog returns an empty log whose tail (and head) is tail.
func NewLog(tail wire.Version) *Log {
	return &Log{tail: tail, byReq: map[reqKey]int{}, seed: maphash.MakeSeed()}
}

// Head is the newest entry's version, or the tail if the log is empty.
func (l *Log) Head() wire.Version {
	if len(l.entries) == 0 {
		return l.tail
	}
	return l.entries[len(l.entries)-1].version
}

// Tail is the version before the oldest entry.
func (l *Log) Tail() wire.Version { return l.tail }

// Len is the number of entries.
func (l *Log) Len() int { return len(l.entries) }

// Entries returns a copy of the entries, oldest first.
func (l *Log) Entries() []Entry { return l.Oldest(len(l.entries)) }

// Oldest returns a copy of the n oldest entries (all if there are fewer).
func (l *Log) Oldest(n int) []Entry {
	n = min(n, len(l.entries))
	if n <= 0 {
		return nil
	}
	out := make([]Entry, n)
	for i := range out {
		out[i] = l.unpack(&l.entries[i])
	}
	return out
}

// Append adds e, which must be newer than the head.
func (l *Log) Append(e Entry) error {
	if !l.Head().Less(e.Version) {
		return fmt.Errorf("pglog: entry %v is not newer than the head %v", e.Version, l.Head())
	}
	o := &e.Object
	p := packed{
		version: e.Version, prior: e.Prior, kind: e.Kind, result: e.Result,
		pool: o.Pool, snap: o.Snap, hash: o.Hash,
		incarnation: e.Req.Incarnation, tid: e.Req.Tid,
		at: l.arenaBase + len(l.arena),
		ns: uint32(len(o.Namespace)), key: uint32(len(o.Key)), name: uint32(len(o.Name)), client: uint32(len(e.Req.Client)),
	}
	l.arena = append(append(append(append(l.arena, o.Namespace...), o.Key...), o.Name...), e.Req.Client...)
	l.entries = append(l.entries, p)
	if e.Req.Client != "" {
		l.byReq[l.reqKey(e.Req)] = l.trimmed + len(l.entries) - 1
	}
	l.checkEnds()
	return nil
}

func (l *Log) reqKey(r wire.ReqID) reqKey {
	return reqKey{maphash.String(l.seed, r.Client), r.Incarnation, r.Tid}
}

// packedKey is reqKey of a packed entry's request (the same hash: Bytes
// and String of equal contents agree).
func (l *Log) packedKey(p *packed) reqKey {
	_, _, _, client := l.strings(p)
	return reqKey{maphash.Bytes(l.seed, client), p.incarnation, p.tid}
}

// strings returns p's strings as slices of the arena.
func (l *Log) strings(p *packed) (ns, key, name, client []byte) {
	b := l.arena[p.at-l.arenaBase:]
	ns, b = b[:p.ns], b[p.ns:]
	key, b = b[:p.key], b[p.key:]
	name, b = b[:p.name], b[p.name:]
	return ns, key, name, b[:p.client]
}

func (l *Log) unpack(p *packed) Entry {
	ns, key, name, client := l.strings(p)
	return Entry{
		Version: p.version, Prior: p.prior, Kind: p.kind, Result: p.result,
		Object: objid.ID{Pool: p.pool, Namespace: string(ns), Key: string(key), Name: string(name), Snap: p.snap, Hash: p.hash},
		Req:    wire.ReqID{Client: string(client), Incarnation: p.incarnation, Tid: p.tid},
	}
}

// Lookup returns the entry of request r, if it is still in the log.
func (l *Log) Lookup(r wire.ReqID) (Entry, bool) {
	i, ok := l.byReq[l.reqKey(r)]
	if !ok {
		return Entry{}, false
	}
	p := &l.entries[i-l.trimmed]
	if _, _, _, client := l.strings(p); string(client) != r.Client {
		return Entry{}, false // another client's name with the same hash
	}
	return l.unpack(p), true
}

// TrimTo drops the oldest entries so that at most keep remain, and
// returns how many it dropped. Their persisted keys must be deleted in
// the same transaction that records the new tail: take them with Oldest
// first.
func (l *Log) TrimTo(keep int) int {
	return l.trimOldest(len(l.entries) - keep)
}

// TrimThrough drops the entries at or before version v and returns how
// many it dropped: a replica follows the tail its primary chose, whose
// transaction deleted the same entries' keys.
func (l *Log) TrimThrough(v wire.Version) int {
	n, _ := slices.BinarySearchFunc(l.entries, v, func(p packed, v wire.Version) int {
		if v.Less(p.version) {
			return 1
		}
		return -1
	})
	return l.trimOldest(n)
}

// trimOldest drops the n oldest entries (none if n <= 0).
func (l *Log) trimOldest(n int) int {
	if n <= 0 {
		return 0
	}
	for i := range n {
		k := l.packedKey(&l.entries[i])
		if j, ok := l.byReq[k]; ok && j == l.trimmed+i {
			delete(l.byReq, k)
		}
	}
	l.tail = l.entries[n-1].version
	// Trimming moves the start of the slice rather than copying what is
	// kept: a full log is trimmed by one entry at every write, and
	// copying its 3,000 entries each time cost 15% of an OSD's CPU under
	// 4 KiB writes. Append moves the entries to a new array once the old
	// one is used up, which leaves the trimmed ones behind. The arena is
	// compacted likewise, once most of it is dead.
	l.entries = l.entries[n:]
	l.trimmed += n
	l.compactArena()
	l.checkEnds()
	return n
}

// compactArena drops the trimmed entries' bytes from the arena once they
// are more than half of it (each byte is copied a bounded number of
// times on average).
func (l *Log) compactArena() {
	live := l.arenaBase + len(l.arena) // every byte is dead if no entry is left
	if len(l.entries) > 0 {
		live = l.entries[0].at
	}
	dead := live - l.arenaBase
	if dead < 4096 || dead < len(l.arena)/2 {
		return
	}
	l.arena = append([]byte(nil), l.arena[dead:]...)
	l.arenaBase = live
}
