package locker

import (
	"fmt"
	"time"
)

// ActionKind says what an Action asks the driver to do.
type ActionKind int

// Actions.
const (
	// ActionGrant: send Client a cap message for its cap CapID on Ino
	// granting Caps (the whole issued set) with Seq and IssueSeq, and
	// the size and mtime the MDS has (Attrs), which a client granted Fs
	// or Fx starts from.
	ActionGrant ActionKind = iota + 1
	// ActionRevoke: send Client a cap message for its cap CapID on Ino
	// that sets its caps to Caps with Seq; Revoking are the bits taken
	// away. The client stops using them, flushes what they covered
	// (buffered data, dirty size and mtime) and acks with Seq. When
	// IssueSeq equals Seq the message also grants bits (Caps has some
	// the client did not hold).
	ActionRevoke
	// ActionFlushAck: the MDS has Client's flush TID of Ino's Attrs:
	// journal the new size and mtime, then ack the flush on cap CapID
	// (the client ignores a cap message naming another cap).
	ActionFlushAck
	// ActionReply: request Req of Client may proceed (a stat: answer it
	// with Attrs, where the fields in Approx may be stale; a setattr:
	// change the inode, then call Done; an open: the reply carries the
	// cap, Caps with Seq).
	ActionReply
	// ActionLaggy: Client has not acked the revocation of Revoking on
	// Ino sent at Since: report it in the health check "clients failing
	// to respond to capability release".
	ActionLaggy
	// ActionDropClient: Client's session is over and its caps gone. If
	// Blocklist, it held caps to write: fence it (a blocklist entry in
	// the OSD map) and call Fenced once the OSDs enforce it; until then
	// its caps still block conflicting grants.
	ActionDropClient
)

// Action is one thing the driver must do. Which fields matter depends
// on Kind.
type Action struct {
	Kind      ActionKind
	Client    ClientID
	Ino       Ino
	Caps      Caps
	Revoking  Caps
	CapID     uint64
	Seq       uint64
	IssueSeq  uint64
	Req       ReqID
	Attrs     FileAttrs
	Approx    Field
	TID       uint64
	Since     time.Time
	Blocklist bool
}

func (a Action) String() string {
	switch a.Kind {
	case ActionGrant:
		return fmt.Sprintf("grant client.%d ino %#x %s seq %d", a.Client, a.Ino, a.Caps, a.Seq)
	case ActionRevoke:
		return fmt.Sprintf("revoke client.%d ino %#x %s to %s seq %d", a.Client, a.Ino, a.Revoking, a.Caps, a.Seq)
	case ActionFlushAck:
		return fmt.Sprintf("flushack client.%d ino %#x tid %d size %d mtime %d", a.Client, a.Ino, a.TID, a.Attrs.Size, a.Attrs.Mtime.Unix())
	case ActionReply:
		s := fmt.Sprintf("reply req %d client.%d ino %#x size %d mtime %d", a.Req, a.Client, a.Ino, a.Attrs.Size, a.Attrs.Mtime.Unix())
		if a.Approx != 0 {
			s += fmt.Sprintf(" approx %#x", uint32(a.Approx))
		}
		if a.Seq != 0 {
			s += fmt.Sprintf(" caps %s seq %d", a.Caps, a.Seq)
		}
		return s
	case ActionLaggy:
		return fmt.Sprintf("laggy client.%d ino %#x %s since %d", a.Client, a.Ino, a.Revoking, a.Since.Unix())
	case ActionDropClient:
		if a.Blocklist {
			return fmt.Sprintf("drop client.%d blocklist", a.Client)
		}
		return fmt.Sprintf("drop client.%d", a.Client)
	}
	return fmt.Sprintf("action %d", a.Kind)
}
