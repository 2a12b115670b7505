package locker

import (
	"math/bits"
	"slices"
	"time"

	"github.com/cuttlestore/cuttle/internal/invariants"
)

// evaluate brings ino to a consistent state after an event: it picks
// each lock's state from the requests waiting and the clients' wants,
// revokes what the states no longer allow, answers the requests that
// may now proceed, and grants what is wanted, allowed and conflicts
// with nothing another client still implements. Actions are appended
// to out.
func (l *Locker) evaluate(ino Ino, now time.Time, out []Action) []Action {
	in := l.inodes[ino]
	if in == nil {
		return out
	}
	start := len(out)
	wants := in.demand()
	for {
		in.pickStates(&wants)
		out = in.revoke(ino, now, out)
		var replied bool
		out, replied = in.answer(ino, out)
		if !replied {
			break
		}
	}
	out = in.grant(ino, out, start)
	l.noteRevoking(ino, in)
	if invariants.Enabled {
		invariants.Check(l.Verify(ino))
	}
	return out
}

// noteRevoking records whether any cap on ino waits for an ack.
func (l *Locker) noteRevoking(ino Ino, in *inode) {
	for _, cp := range in.list {
		if len(cp.revokes) != 0 {
			l.revoking[ino] = struct{}{}
			return
		}
	}
	delete(l.revoking, ino)
}

// pickStates sets each lock's state: lock while a request holds it or
// waits to change it, sync while one waits to read it, else what the
// clients want (demand).
func (in *inode) pickStates(wants *[numLocks]lockState) {
	var need [numLocks]LockMode
	for _, r := range in.waiting {
		for k, m := range r.needs() {
			need[k] = max(need[k], m)
		}
	}
	for k := range numLocks {
		lk := &in.locks[k]
		switch {
		case lk.xlock != 0 || need[k] == Xlock:
			lk.state, lk.loner = StateLock, 0
		case need[k] == Rdlock:
			lk.state, lk.loner = StateSync, 0
		default:
			lk.state, lk.loner = wants[k].state, wants[k].loner
		}
	}
}

// demand is the state of each lock the clients' wants call for. The
// file lock: no writer → sync (everyone reads and caches); one client,
// a writer → excl (it caches, buffers and updates size and mtime
// alone); several clients with a writer among them → mix (synchronous
// I/O for all). The other locks: one client wanting x and no other
// wanting the lock → excl; otherwise sync.
func (in *inode) demand() [numLocks]lockState {
	var users, writers [numLocks]int
	var last [numLocks]ClientID
	for i, c := range in.order {
		w := in.list[i].Wanted
		for k := range numLocks {
			if w&k.mask() == 0 {
				continue
			}
			users[k]++
			if w&k.changeBits() != 0 {
				writers[k]++
				last[k] = c
			}
		}
	}
	var out [numLocks]lockState
	for k := range numLocks {
		switch {
		case writers[k] == 0:
			out[k].state = StateSync
		case users[k] == 1:
			out[k].state, out[k].loner = StateExcl, last[k]
		case k == LockFile:
			out[k].state = StateMix
		default:
			out[k].state = StateSync
		}
	}
	return out
}

// allowedFor returns every bit the lock states let client hold.
func (in *inode) allowedFor(client ClientID) Caps {
	a := Pin
	for k := range numLocks {
		lk := in.locks[k]
		a |= allowed(k, lk.state, lk.loner == client)
	}
	return a
}

// revoke cuts every client's issued caps to what the states allow.
func (in *inode) revoke(ino Ino, now time.Time, out []Action) []Action {
	for i, c := range in.order {
		cp := in.list[i]
		keep := cp.Issued & in.allowedFor(c)
		if keep == cp.Issued {
			continue
		}
		gone := cp.Issued &^ keep
		cp.Issued = keep
		cp.Seq++
		cp.revokes = append(cp.revokes, revocation{seq: cp.Seq, bits: gone, sent: now})
		out = append(out, Action{Kind: ActionRevoke, Client: c, Ino: ino, CapID: cp.ID, Caps: keep, Revoking: gone, Seq: cp.Seq, IssueSeq: cp.IssueSeq, Attrs: in.attrs})
	}
	return out
}

// implementedBy returns the union of the bits the clients other than
// except implement (every client's, for except 0).
func (in *inode) implementedBy(except ClientID) Caps {
	var u Caps
	for i, c := range in.order {
		if c != except {
			u |= in.list[i].Implemented
		}
	}
	return u
}

// holders counts, per bit, the clients implementing it, so that what
// the others implement is found without walking every client for each
// one (a file open by thousands of clients).
type holders [32]int32

func (in *inode) holders() *holders {
	var h holders
	for _, cp := range in.list {
		h.add(cp.Implemented)
	}
	return &h
}

func (h *holders) add(c Caps) {
	for c != 0 {
		h[bits.TrailingZeros32(uint32(c))]++
		c &= c - 1
	}
}

// others returns the bits implemented by some client other than one
// that implements own.
func (h *holders) others(own Caps) Caps {
	var u Caps
	for i, n := range h {
		if own&(1<<i) != 0 {
			n--
		}
		if n > 0 {
			u |= 1 << i
		}
	}
	return u
}

// ready reports whether r may proceed: for each lock it reads, no
// client implements a bit that changes the value; for each lock it
// changes, no client implements any bit of the lock; and no other
// request holds a lock it needs.
func (in *inode) ready(r *Request) bool {
	all := in.implementedBy(0)
	for k, m := range r.needs() {
		if m == 0 {
			continue
		}
		k := LockKind(k)
		if x := in.locks[k].xlock; x != 0 && x != r.ID {
			return false
		}
		switch m {
		case Rdlock:
			if all&k.changeBits() != 0 {
				return false
			}
		case Xlock:
			if all&k.mask() != 0 {
				return false
			}
		}
	}
	return true
}

// answer replies to the waiting requests that may proceed, in arrival
// order; a request that must wait holds back later ones that need any
// of the same locks, so a setattr is not starved by a stream of stats.
func (in *inode) answer(ino Ino, out []Action) ([]Action, bool) {
	var blocked [numLocks]bool
	var replied bool
	in.waiting = slices.DeleteFunc(in.waiting, func(r *Request) bool {
		needs := r.needs()
		for k, m := range needs {
			if m != 0 && blocked[k] {
				return false
			}
		}
		if !in.ready(r) {
			for k, m := range needs {
				if m != 0 {
					blocked[k] = true
				}
			}
			return false
		}
		for k, m := range needs {
			if m == Xlock {
				in.locks[k].xlock = r.ID
			}
		}
		out = append(out, in.reply(ino, r))
		replied = true
		return true
	})
	return out, replied
}

// reply is the answer to r: the size and mtime the MDS has, with the
// file fields r did not ask to be exact marked approximate when a
// client may be changing them.
func (in *inode) reply(ino Ino, r *Request) Action {
	a := Action{Kind: ActionReply, Req: r.ID, Client: r.Client, Ino: ino, Attrs: in.attrs}
	if r.Op == OpStat && in.implementedBy(0)&LockFile.changeBits() != 0 {
		a.Approx = FieldsFile &^ r.Fields
	}
	return a
}

// grant issues to each client, in order, the bits it wants that the
// states allow and that conflict with no bit another client still
// implements (a revocation not yet acked holds the grant back). A grant
// to a client revoked from in the same evaluation (out[start:]) rides
// in the revoke's message, as Ceph's cap messages carry the whole new
// issued set, unless it gives back a bit that message takes.
func (in *inode) grant(ino Ino, out []Action, start int) []Action {
	h := in.holders()
	for i, c := range in.order {
		cp := in.list[i]
		add := cp.Wanted & in.allowedFor(c) &^ cp.Issued
		if add == 0 {
			continue
		}
		add &^= h.others(cp.Implemented).Conflicts()
		if add == 0 {
			continue
		}
		h.add(add &^ cp.Implemented)
		cp.Issued |= add
		cp.Implemented |= add
		if i := lastRevoke(out[start:], c, cp.Seq); i >= 0 && out[start+i].Revoking&add == 0 {
			cp.IssueSeq = cp.Seq
			out[start+i].Caps = cp.Issued
			out[start+i].IssueSeq = cp.IssueSeq
			continue
		}
		cp.Seq++
		cp.IssueSeq = cp.Seq
		out = append(out, Action{Kind: ActionGrant, Client: c, Ino: ino, CapID: cp.ID, Caps: cp.Issued, Seq: cp.Seq, IssueSeq: cp.IssueSeq, Attrs: in.attrs})
	}
	return out
}

// lastRevoke returns the index in acts of the revoke to client with seq,
// or -1.
func lastRevoke(acts []Action, client ClientID, seq uint64) int {
	for i := len(acts) - 1; i >= 0; i-- {
		if a := acts[i]; a.Kind == ActionRevoke && a.Client == client && a.Seq == seq {
			return i
		}
	}
	return -1
}
