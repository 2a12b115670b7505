package auth

import (
	"errors"
	"fmt"
)

// Errors other than refusals. Refusals wrap ErrDenied (handshake.go) and
// are *Refusal values carrying a Reason.
var (
	// ErrMalformed: a handshake payload, ticket or encoded key set does
	// not decode. It is not a refusal: the peer is broken or hostile, not
	// denied.
	ErrMalformed = errors.New("auth: malformed payload")
	// ErrUnknownEntity: a KeyServer has no secret for the entity.
	ErrUnknownEntity = errors.New("auth: unknown entity")
	// ErrBadKeyring: a keyring's text does not parse.
	ErrBadKeyring = errors.New("auth: bad keyring")
	// ErrInsecureKeyring: a keyring file is accessible by group or others.
	ErrInsecureKeyring = errors.New("auth: keyring file permissions too open")
	// ErrBadCaps: a capability text does not parse.
	ErrBadCaps = errors.New("auth: bad capabilities")
	// ErrNoServiceKey: the authority holds no current rotating key for a
	// service (Rotate was never called, or not for too long).
	ErrNoServiceKey = errors.New("auth: no current service key")
)

// Reason classifies a refusal, for counters and logs. The set is closed:
// Reasons lists every value.
type Reason string

// The reasons a peer is refused.
const (
	ReasonUnknownEntity Reason = "unknown entity"             // no secret for the name
	ReasonBadProof      Reason = "bad proof"                  // wrong key: a proof or sealed reply did not verify
	ReasonBadTicket     Reason = "bad ticket"                 // a ticket did not open: forged or tampered
	ReasonExpired       Reason = "expired ticket"             // outside the ticket's validity
	ReasonWrongService  Reason = "ticket for another service" // e.g. an mds ticket shown to an osd
	ReasonUnknownKey    Reason = "unknown rotating key"       // key id rotated out, or never known
	ReasonStale         Reason = "stale authorizer"           // timestamp outside the skew window
	ReasonReplay        Reason = "replayed authorizer"        // nonce seen before within the window
	ReasonForbidden     Reason = "forbidden"                  // capabilities do not allow the request
	ReasonMalformed     Reason = "malformed payload"          // counted, but wraps ErrMalformed, not ErrDenied
)

// Reasons returns every Reason, so counters can be pre-registered.
func Reasons() []Reason {
	return []Reason{ReasonUnknownEntity, ReasonBadProof, ReasonBadTicket, ReasonExpired,
		ReasonWrongService, ReasonUnknownKey, ReasonStale, ReasonReplay, ReasonForbidden, ReasonMalformed}
}

// Refusal is the error of every refusal. It wraps ErrDenied.
type Refusal struct {
	Reason Reason
	Peer   EntityName // zero when not yet known
	Detail string
}

func (r *Refusal) Error() string {
	who := ""
	if !r.Peer.IsZero() {
		who = r.Peer.String() + ": "
	}
	return fmt.Sprintf("%v: %s: %s%s", ErrDenied, r.Reason, who, r.Detail)
}

// Unwrap makes errors.Is(err, ErrDenied) hold.
func (r *Refusal) Unwrap() error { return ErrDenied }

// ReasonOf returns the Reason of a refusal or malformed-payload error
// anywhere in err's chain.
func ReasonOf(err error) (Reason, bool) {
	var r *Refusal
	switch {
	case errors.As(err, &r):
		return r.Reason, true
	case errors.Is(err, ErrMalformed):
		return ReasonMalformed, true
	}
	return "", false
}
