package auth

import (
	"errors"
	"fmt"
	"strings"
)

// The handshake contract between auth and the messenger (internal/msgr).
//
// Before any other message on a new connection, the messenger runs one
// handshake: the connecting side drives a ClientHandshake, the accepting
// side a ServerHandshake. Each Step consumes the peer's last payload (nil
// for the client's first step) and returns the next payload to send. The
// exchange ends when a side reports done; the server's last payload (its
// verdict) is still sent. The messenger carries the payloads opaquely in
// auth frames, bounds their size and count, and closes the connection on
// any error, logging it.
//
// After the handshake both sides hold the same SessionKey (nil when the
// mode does not sign); the messenger signs every later frame with it.

// ErrDenied is wrapped by every refusal: unknown entity, wrong key,
// expired or forged ticket, missing capability.
var ErrDenied = errors.New("auth: permission denied")

// EntityName names an entity of the cluster: "mon.a", "osd.3",
// "client.admin", "mds.x".
type EntityName struct {
	Type string // mon, osd, mds, client, mgr
	ID   string
}

func (n EntityName) String() string { return n.Type + "." + n.ID }

// IsZero reports whether n is the zero EntityName.
func (n EntityName) IsZero() bool { return n == EntityName{} }

// entityTypes are the entity types a name may have.
var entityTypes = map[string]bool{"mon": true, "osd": true, "mds": true, "client": true, "mgr": true}

// ParseEntityName parses "type.id".
func ParseEntityName(s string) (EntityName, error) {
	typ, id, ok := strings.Cut(s, ".")
	if !ok || id == "" || !entityTypes[typ] || len(s) > 256 {
		return EntityName{}, fmt.Errorf("auth: bad entity name %q (want TYPE.ID, TYPE one of mon, osd, mds, client, mgr)", s)
	}
	return EntityName{typ, id}, nil
}

// ClientHandshake is the connecting side of one handshake.
type ClientHandshake interface {
	// Step consumes the server's last payload (nil on the first call)
	// and returns the next payload to send; done is true when the
	// server's payload completed the handshake (out is then nil).
	Step(in []byte) (out []byte, done bool, err error)
	// SessionKey is the key frames are signed with after the handshake,
	// nil if they are not signed.
	SessionKey() []byte
}

// ServerHandshake is the accepting side of one handshake.
type ServerHandshake interface {
	// Step consumes the client's last payload and returns the payload to
	// send back; done is true when out is the last one. An error means
	// the client is refused (wrapping ErrDenied when it is a refusal
	// rather than a malformed payload); the messenger closes the
	// connection.
	Step(in []byte) (out []byte, done bool, err error)
	// Peer is the authenticated entity, valid once done.
	Peer() EntityName
	// Caps are the peer's capabilities, valid once done.
	Caps() Caps
	// SessionKey is the key frames are signed with, nil if unsigned.
	SessionKey() []byte
}

// Caps are an entity's capabilities by service ("mon", "osd", "mds"),
// in their text form ("allow r", "allow rw pool=rbd"). An empty Caps
// grants nothing; AllCaps grants everything.
type Caps map[string]string

// AllCaps is what the "none" mode grants: the cluster does not check.
var AllCaps = Caps{"mon": "allow *", "osd": "allow *", "mds": "allow *", "mgr": "allow *"}

// NoneClient is the client side of the "none" mode (Ceph's
// auth_cluster_required = none): the client names itself, nothing is
// verified and nothing is signed. For tests and trusted networks only.
type NoneClient struct{ Name EntityName }

// Step sends the name, then accepts the server's verdict.
func (c *NoneClient) Step(in []byte) ([]byte, bool, error) {
	if in == nil {
		return []byte("none " + c.Name.String()), false, nil
	}
	if string(in) != "ok" {
		return nil, false, fmt.Errorf("%w: server replied %q to the none handshake", ErrDenied, truncate(in))
	}
	return nil, true, nil
}

// SessionKey is nil: the none mode does not sign.
func (c *NoneClient) SessionKey() []byte { return nil }

// NoneServer is the server side of the "none" mode.
type NoneServer struct{ peer EntityName }

// Step accepts any well-formed name.
func (s *NoneServer) Step(in []byte) ([]byte, bool, error) {
	rest, ok := strings.CutPrefix(string(in), "none ")
	if !ok {
		return nil, false, fmt.Errorf("auth: none handshake: unexpected payload %q", truncate(in))
	}
	name, err := ParseEntityName(rest)
	if err != nil {
		return nil, false, fmt.Errorf("auth: none handshake: %w", err)
	}
	s.peer = name
	return []byte("ok"), true, nil
}

// Peer is the name the client gave.
func (s *NoneServer) Peer() EntityName { return s.peer }

// Caps grants everything.
func (s *NoneServer) Caps() Caps { return AllCaps }

// SessionKey is nil: the none mode does not sign.
func (s *NoneServer) SessionKey() []byte { return nil }

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// The handshakes auth implements.
var (
	_ ClientHandshake = (*NoneClient)(nil)
	_ ServerHandshake = (*NoneServer)(nil)
	_ ClientHandshake = (*MonClient)(nil)
	_ ServerHandshake = (*MonServer)(nil)
	_ ClientHandshake = (*ServiceClient)(nil)
	_ ServerHandshake = (*ServiceServer)(nil)
)
