package session

import (
	"fmt"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// ActionKind says what an Action asks the driver to do.
type ActionKind uint8

// Actions.
const (
	// Connect: open a messenger session to the holder mds.Name at Addr
	// (GID) for the messages that follow.
	Connect ActionKind = iota + 1
	// SendSession: send Session to the holder.
	SendSession
	// SendRequest: send Request to the holder.
	SendRequest
	// SendReconnect: send the holder a ClientReconnect with every cap
	// and file lock the client holds (the driver's cap table knows
	// them), before the replays that follow.
	SendReconnect
	// RequestDone: request Tid has its answer, Reply (unsafe or safe):
	// wake the caller.
	RequestDone
	// RequestSafe: request Tid is journaled (fsync of a directory waits
	// for this); the session forgets it.
	RequestSafe
	// RequestFailed: request Tid ends with Err, unanswered.
	RequestFailed
	// CapsStale: the MDS marked the session stale: stop using the caps
	// (no cached reads, no buffered writes) until CapsRenewed.
	CapsStale
	// CapsRenewed: the session is live again.
	CapsRenewed
	// CapsLost: the session ended or was replaced without a reconnect:
	// the caps are gone (drop cached data; dirty data cannot be kept
	// coherent and is written only if the caller retries).
	CapsLost
	// RecallCaps: release caps until at most MaxCaps are held.
	RecallCaps
	// FlushCaps: flush every dirty cap now (the MDS asked).
	FlushCaps
	// SessionEnded: the session is closed for good, with Err.
	SessionEnded
)

var kindNames = [...]string{"", "connect", "send-session", "send-request", "send-reconnect", "done", "safe", "failed",
	"caps-stale", "caps-renewed", "caps-lost", "recall-caps", "flush-caps", "session-ended"}

func (k ActionKind) String() string {
	if int(k) < len(kindNames) && k > 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("action(%d)", uint8(k))
}

// Action is one thing the driver must do; which fields are set depends
// on Kind.
type Action struct {
	Kind    ActionKind
	Name    string
	Addr    string
	GID     uint64
	Session *wire.ClientSession
	Request *wire.ClientRequest
	Tid     uint64
	Reply   *wire.ClientReply
	Err     error
	MaxCaps uint64
}

// String renders the action in one line, for tests and logs.
func (a Action) String() string {
	switch a.Kind {
	case Connect:
		return fmt.Sprintf("connect gid %d %s", a.GID, a.Addr)
	case SendSession:
		s := fmt.Sprintf("send session %s seq %d", a.Session.Op, a.Session.Seq)
		if a.Session.Op == wire.SessionRequestOpen {
			s += fmt.Sprintf(" client %s id %d root %q", a.Session.Client, a.Session.ClientID, a.Session.Root)
		}
		return s
	case SendRequest:
		r := a.Request
		s := fmt.Sprintf("send request tid %d %s attempt %d oldest %d", r.Tid, r.Op, r.Attempt, r.OldestTid)
		if r.Flags&wire.RequestReplay != 0 {
			s += " replay"
		}
		if r.NumFwd > 0 {
			s += fmt.Sprintf(" fwd %d", r.NumFwd)
		}
		return s
	case RequestDone:
		safe := "unsafe"
		if a.Reply.Safe {
			safe = "safe"
		}
		return fmt.Sprintf("done tid %d %s result %d", a.Tid, safe, a.Reply.Result)
	case RequestSafe:
		return fmt.Sprintf("safe tid %d", a.Tid)
	case RequestFailed:
		return fmt.Sprintf("failed tid %d: %v", a.Tid, a.Err)
	case RecallCaps:
		return fmt.Sprintf("recall caps to %d", a.MaxCaps)
	case SessionEnded:
		return fmt.Sprintf("session ended: %v", a.Err)
	}
	return a.Kind.String()
}
