package osd

import (
	"errors"
	"fmt"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// Authorization of client ops by the caps the peer's ticket carries
// (osd 'allow rw pool=rbd', ...), checked once the OSD has the op's map:
// the pool's name comes from it. With auth none every peer has all caps.

// errNoPool refuses an op on a pool the map does not have.
var errNoPool = errors.New("no such pool")

// access returns what ops need: r for reads, w for writes, class-read or
// class-write for object-class calls by the method's kind.
func (o *OSD) access(ops []wire.ObjectOp) auth.Access {
	var need auth.Access
	for i := range ops {
		switch c := ops[i].Code; {
		case c == wire.OpCall:
			if m, ok := o.cfg.Classes.Lookup(ops[i].Name); ok && !m.Write {
				need |= auth.AccessClassRead
			} else {
				need |= auth.AccessClassWrite
			}
		case c.IsWrite():
			need |= auth.AccessWrite
		default:
			need |= auth.AccessRead
		}
	}
	return need
}

// checker returns the session's cap checker, built once per session.
func (o *OSD) checker(from msgr.Peer) (*auth.CapChecker, error) {
	o.mu.Lock()
	cc := o.checkers[from.Session]
	o.mu.Unlock()
	if cc != nil {
		return cc, nil
	}
	cc, err := auth.NewCapChecker(from.Name, from.Caps, o.cfg.AuthEvents)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.checkers[from.Session] = cc
	o.mu.Unlock()
	return cc, nil
}

// authorize returns nil if the peer may run op in m, or why not.
func (o *OSD) authorize(from msgr.Peer, m *osdmap.Map, op *wire.OSDOp) error {
	cc, err := o.checker(from)
	if err != nil {
		return err
	}
	pool := m.Pool(op.PG.Pool)
	if pool == nil {
		return fmt.Errorf("%w: %d", errNoPool, op.PG.Pool)
	}
	req := auth.Request{Service: "osd", Access: o.access(op.Ops), Pool: pool.Name}
	if !(len(op.Ops) == 1 && op.Ops[0].Code == wire.OpListObjects) {
		req.Namespace, req.Object = op.Object.Namespace, op.Object.Name
	} else if op.Ops[0].Flags&wire.ListAllNamespaces == 0 {
		req.Namespace = op.Ops[0].Name
	} else {
		req.Namespace = "*"
	}
	return cc.Check(req)
}
