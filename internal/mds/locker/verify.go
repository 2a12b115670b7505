package locker

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Verify checks ino's cap state against the rules the Locker keeps:
//   - a cap issues only what its client implements, and implements
//     only what it was issued plus the revocations not yet acked;
//   - a cap issues only what the lock states allow its client;
//   - no two clients implement conflicting bits (Caps.Conflicts);
//   - revocations are in Seq order, none after the cap's Seq;
//   - a lock in excl has its loner among the cap holders.
//
// It returns nil or an error naming the first rule broken. Tests call
// it after every event; under the invariants build tag the Locker calls
// it itself.
func (l *Locker) Verify(ino Ino) error {
	in := l.inodes[ino]
	if in == nil {
		return nil
	}
	order := in.clientOrder()
	for _, c := range order {
		cp := in.caps[c]
		if cp.Issued&^cp.Implemented != 0 {
			return fmt.Errorf("locker: ino %#x client.%d issued %s beyond implemented %s", ino, c, cp.Issued, cp.Implemented)
		}
		want := cp.Issued
		var last uint64
		for _, r := range cp.revokes {
			if r.seq <= last || r.seq > cp.Seq {
				return fmt.Errorf("locker: ino %#x client.%d revocation seq %d out of order (cap seq %d)", ino, c, r.seq, cp.Seq)
			}
			last = r.seq
			want |= r.bits
		}
		if !cp.fencing && want != cp.Implemented {
			return fmt.Errorf("locker: ino %#x client.%d implements %s, issued plus revoking is %s", ino, c, cp.Implemented, want)
		}
		if a := in.allowedFor(c); cp.Issued&^a != 0 {
			return fmt.Errorf("locker: ino %#x client.%d issued %s beyond allowed %s (%s)", ino, c, cp.Issued, a, in.statesString())
		}
		for _, d := range order {
			if d > c && cp.Implemented.ConflictsWith(in.caps[d].Implemented) {
				return fmt.Errorf("locker: ino %#x client.%d %s conflicts with client.%d %s", ino, c, cp.Implemented, d, in.caps[d].Implemented)
			}
		}
	}
	var revoking bool
	for _, cp := range in.list {
		revoking = revoking || len(cp.revokes) != 0
	}
	if _, ok := l.revoking[ino]; ok != revoking {
		return fmt.Errorf("locker: ino %#x has revocations in flight %v, but is listed for Tick %v", ino, revoking, ok)
	}
	if len(in.order) != len(in.caps) || len(in.list) != len(in.caps) {
		return fmt.Errorf("locker: ino %#x: %d caps, %d in order", ino, len(in.caps), len(in.order))
	}
	for i, c := range in.order {
		if in.caps[c] != in.list[i] || (i > 0 && in.order[i-1] >= c) {
			return fmt.Errorf("locker: ino %#x: client order broken at %d", ino, i)
		}
	}
	for k := range numLocks {
		lk := in.locks[k]
		if lk.state == StateExcl && in.caps[lk.loner] == nil {
			return fmt.Errorf("locker: ino %#x %s lock excl for client.%d without a cap", ino, k, lk.loner)
		}
	}
	return nil
}

func (in *inode) statesString() string {
	s := ""
	for k := range numLocks {
		if k > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%s", k, in.locks[k].state)
	}
	return s
}

// InodeCaps is one inode's cap state as a value: what one rank hands
// another when it exports the inode's subtree (part II of the file
// system: several active MDSs). Lock states are not part of it: the
// importer derives them from the caps, as the exporter did.
type InodeCaps struct {
	Ino   Ino
	Attrs FileAttrs
	Caps  map[ClientID]Capability
}

// Export removes ino's cap state from this Locker and returns it, for
// the rank that takes over the inode. It refuses (ErrBusy) while a
// request waits on or holds one of the inode's locks, or a cap waits
// for its client to be fenced: the exporter finishes those first.
// Revocations in flight travel with the caps; the client's ack goes to
// the importer.
func (l *Locker) Export(ino Ino) (InodeCaps, error) {
	in := l.inodes[ino]
	if in == nil {
		return InodeCaps{}, fmt.Errorf("locker: export ino %#x: %w", ino, ErrUnknownInode)
	}
	if len(in.waiting) != 0 || in.anyXlock() {
		return InodeCaps{}, fmt.Errorf("locker: export ino %#x: requests in progress: %w", ino, ErrBusy)
	}
	out := InodeCaps{Ino: ino, Attrs: in.attrs, Caps: map[ClientID]Capability{}}
	for c, cp := range in.caps {
		if cp.fencing {
			return InodeCaps{}, fmt.Errorf("locker: export ino %#x: client.%d being fenced: %w", ino, c, ErrBusy)
		}
	}
	for c, cp := range in.caps {
		v := *cp
		v.revokes = slices.Clone(cp.revokes)
		out.Caps[c] = v
		l.untrack(c, ino)
	}
	delete(l.inodes, ino)
	delete(l.revoking, ino)
	return out, nil
}

// Import takes an inode's cap state from another rank and brings it to
// a consistent state here; the driver tells each client that this rank
// now holds its cap.
func (l *Locker) Import(ic InodeCaps, now time.Time) ([]Action, error) {
	if l.inodes[ic.Ino] != nil {
		return nil, fmt.Errorf("locker: import ino %#x: %w", ic.Ino, ErrAlreadyHere)
	}
	in := l.inode(ic.Ino)
	in.attrs = ic.Attrs
	for _, c := range slices.Sorted(maps.Keys(ic.Caps)) {
		v := ic.Caps[c]
		v.revokes = slices.Clone(v.revokes)
		in.setCap(c, &v)
		l.track(c, ic.Ino)
	}
	return l.evaluate(ic.Ino, now, nil), nil
}
