package authmon

import (
	"fmt"
	"maps"
	"sync/atomic"

	"github.com/cuttlestore/cuttle/internal/auth"
)

// KeyServer is the auth.KeyServer the monitor's Authority authenticates
// with: the entities of the database as last applied (or loaded). Until
// the database is seeded it also answers from a fallback (the keyring in
// the monitor's data directory), so monitors can authenticate to each
// other and elect the leader that seeds it; once seeded, the database is
// the only source.
//
// It is safe for concurrent use: the service publishes an immutable
// snapshot after every change, and lookups read the latest one without
// locking.
type KeyServer struct {
	fallback auth.KeyServer
	view     atomic.Pointer[keyView]
}

// keyView is one published snapshot; its map is never changed.
type keyView struct {
	seeded   bool
	entities map[auth.EntityName]auth.KeyEntry
}

var _ auth.KeyServer = (*KeyServer)(nil)

// NewKeyServer returns a KeyServer that knows no entity yet and answers
// from fallback (nil: nothing) until the database is seeded. Give it to
// the Authority and to New.
func NewKeyServer(fallback auth.KeyServer) *KeyServer {
	k := &KeyServer{fallback: fallback}
	k.view.Store(&keyView{})
	return k
}

// Secret implements auth.KeyServer. The caps returned are the caller's.
func (k *KeyServer) Secret(name auth.EntityName) (auth.Secret, auth.Caps, error) {
	v := k.view.Load()
	if e, ok := v.entities[name]; ok {
		return e.Key, maps.Clone(e.Caps), nil
	}
	if !v.seeded && k.fallback != nil {
		return k.fallback.Secret(name)
	}
	return auth.Secret{}, nil, fmt.Errorf("%w: %s", auth.ErrUnknownEntity, name)
}

// Seeded reports whether the database the view comes from is seeded, so
// the fallback is no longer consulted.
func (k *KeyServer) Seeded() bool { return k.view.Load().seeded }

// publish makes d's entities the answers. d's map must not change after.
func (k *KeyServer) publish(d *db) {
	k.view.Store(&keyView{seeded: d.seeded, entities: d.entities})
}
