package ops

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// The lock class: advisory locks on an object, exclusive or shared, held
// by (entity, cookie) with an optional expiry — what rbd's exclusive lock
// and many applications' leader election build on. Methods:
//
//	lock.lock    LockRequest -> nothing; EBUSY if held incompatibly
//	lock.unlock  LockRequest (name, cookie) -> nothing; ENOENT if not held
//	lock.info    LockRequest (name) -> LockState
//
// A lock named N is stored in the user attribute "lock.N", so it is
// replicated, recovered and listed like any attribute.

// Lock types.
const (
	LockExclusive uint8 = 1
	LockShared    uint8 = 2
)

// LockRequest is the input of every lock method.
type LockRequest struct {
	Name     string
	Type     uint8
	Cookie   string
	Duration int64 // nanoseconds; 0 holds until unlocked
}

// LockHolder is one holder of a lock.
type LockHolder struct {
	Entity  string
	Cookie  string
	Expires int64 // Unix nanoseconds; 0 never
}

// LockState is a lock's type and holders, as lock.info returns it.
type LockState struct {
	Type    uint8
	Holders []LockHolder
}

const lockAttrPrefix = "lock."

// Encode encodes r: version 1: name, type, cookie, duration.
func (r LockRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(r.Name)
	e.Uint8(r.Type)
	e.String(r.Cookie)
	e.Varint(r.Duration)
	e.End(mk)
	return e.Data()
}

// DecodeLockRequest decodes what Encode wrote.
func DecodeLockRequest(b []byte) (LockRequest, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := LockRequest{Name: d.String(maxXattrName), Type: d.Uint8(), Cookie: d.String(maxKeyLen), Duration: d.Varint()}
	d.End()
	if err := d.Finish(); err != nil {
		return LockRequest{}, fmt.Errorf("lock request: %w", err)
	}
	return r, nil
}

const maxKeyLen = 4096

// Encode encodes s: version 1: type, holders (entity, cookie, expires).
func (s LockState) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uint8(s.Type)
	e.Uvarint(uint64(len(s.Holders)))
	for _, h := range s.Holders {
		e.String(h.Entity)
		e.String(h.Cookie)
		e.Varint(h.Expires)
	}
	e.End(mk)
	return e.Data()
}

// DecodeLockState decodes what Encode wrote.
func DecodeLockState(b []byte) (LockState, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	s := LockState{Type: d.Uint8()}
	n := d.Count(3)
	for i := 0; i < n && d.Err() == nil; i++ {
		s.Holders = append(s.Holders, LockHolder{Entity: d.String(maxKeyLen), Cookie: d.String(maxKeyLen), Expires: d.Varint()})
	}
	d.End()
	if err := d.Finish(); err != nil {
		return LockState{}, fmt.Errorf("lock state: %w", err)
	}
	return s, nil
}

func registerLock(r *Registry) {
	must(r.Register("lock", "lock", Method{Write: true, Run: lockLock}))
	must(r.Register("lock", "unlock", Method{Write: true, Run: lockUnlock}))
	must(r.Register("lock", "info", Method{Run: lockInfo}))
}

// must panics on a registration error, which only a programming error in
// this package's own classes can cause.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// lockRead decodes the request and the lock's live state (expired holders
// dropped).
func lockRead(mc *MethodContext, in []byte) (LockRequest, LockState, error) {
	req, err := DecodeLockRequest(in)
	if err != nil {
		return LockRequest{}, LockState{}, Errorf(wire.EINVAL, "%v", err)
	}
	if req.Name == "" {
		return LockRequest{}, LockState{}, Errorf(wire.EINVAL, "lock name is empty")
	}
	if !mc.Exists() {
		return req, LockState{}, nil
	}
	out, err := mc.Do(wire.ObjectOp{Code: wire.OpGetXattr, Name: lockAttrPrefix + req.Name})
	if code, _ := Code(err); code == wire.ENODATA {
		return req, LockState{}, nil
	} else if err != nil {
		return req, LockState{}, err
	}
	st, err := DecodeLockState(out.Data)
	if err != nil {
		return req, LockState{}, Errorf(wire.EIO, "lock %q: %v", req.Name, err)
	}
	now := mc.Now()
	st.Holders = slices.DeleteFunc(st.Holders, func(h LockHolder) bool { return h.Expires != 0 && h.Expires <= now })
	return req, st, nil
}

func lockWrite(mc *MethodContext, name string, st LockState) error {
	_, err := mc.Do(wire.ObjectOp{Code: wire.OpSetXattr, Name: lockAttrPrefix + name, Data: st.Encode()})
	return err
}

func lockLock(mc *MethodContext, in []byte) ([]byte, error) {
	req, st, err := lockRead(mc, in)
	if err != nil {
		return nil, err
	}
	if req.Type != LockExclusive && req.Type != LockShared {
		return nil, Errorf(wire.EINVAL, "lock type %d (want 1 exclusive or 2 shared)", req.Type)
	}
	me := LockHolder{Entity: mc.Caller(), Cookie: req.Cookie}
	if req.Duration > 0 {
		me.Expires = mc.Now() + req.Duration
	}
	i := slices.IndexFunc(st.Holders, func(h LockHolder) bool { return h.Entity == me.Entity && h.Cookie == me.Cookie })
	switch {
	case i >= 0 && st.Type == req.Type: // renewal
		st.Holders[i] = me
	case len(st.Holders) > 0 && (st.Type == LockExclusive || req.Type == LockExclusive):
		return nil, Errorf(wire.EBUSY, "lock %q is held by %s", req.Name, st.Holders[0].Entity)
	default:
		st.Type = req.Type
		st.Holders = append(st.Holders, me)
	}
	return nil, lockWrite(mc, req.Name, st)
}

func lockUnlock(mc *MethodContext, in []byte) ([]byte, error) {
	req, st, err := lockRead(mc, in)
	if err != nil {
		return nil, err
	}
	n := len(st.Holders)
	st.Holders = slices.DeleteFunc(st.Holders, func(h LockHolder) bool { return h.Entity == mc.Caller() && h.Cookie == req.Cookie })
	if len(st.Holders) == n {
		return nil, Errorf(wire.ENOENT, "lock %q is not held by %s with cookie %q", req.Name, mc.Caller(), req.Cookie)
	}
	if len(st.Holders) == 0 {
		_, err := mc.Do(wire.ObjectOp{Code: wire.OpRmXattr, Name: lockAttrPrefix + req.Name})
		if code, _ := Code(err); code == wire.ENODATA {
			err = nil
		}
		return nil, err
	}
	return nil, lockWrite(mc, req.Name, st)
}

func lockInfo(mc *MethodContext, in []byte) ([]byte, error) {
	_, st, err := lockRead(mc, in)
	if err != nil {
		return nil, err
	}
	if len(st.Holders) == 0 {
		st.Type = 0
	}
	return st.Encode(), nil
}
