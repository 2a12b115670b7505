package lock

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// BreakRequest is the input of lock.break_lock: remove holder (Entity,
// Cookie) of lock Name whoever calls — what a client does to a holder it
// found dead, after fencing it (Ceph's break_lock).
type BreakRequest struct {
	Name   string
	Entity string
	Cookie string
}

// Encode encodes r: version 1: name, entity, cookie.
func (r BreakRequest) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(r.Name)
	e.String(r.Entity)
	e.String(r.Cookie)
	e.End(mk)
	return e.Data()
}

// DecodeBreakRequest decodes what Encode wrote.
func DecodeBreakRequest(b []byte) (BreakRequest, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := BreakRequest{Name: d.String(maxNameLen), Entity: d.String(maxKeyLen), Cookie: d.String(maxKeyLen)}
	d.End()
	if err := d.Finish(); err != nil {
		return BreakRequest{}, fmt.Errorf("lock break request: %w", err)
	}
	return r, nil
}

// breakLock removes one holder of a lock: ENOENT if it does not hold it
// (it released it, or another broke it first).
func breakLock(c objclass.Context, in []byte) ([]byte, error) {
	req, err := DecodeBreakRequest(in)
	if err != nil {
		return nil, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	_, st, err := read(c, Request{Name: req.Name}.Encode())
	if err != nil {
		return nil, err
	}
	n := len(st.Holders)
	st.Holders = slices.DeleteFunc(st.Holders, func(h Holder) bool { return h.Entity == req.Entity && h.Cookie == req.Cookie })
	if len(st.Holders) == n {
		return nil, objclass.Errorf(wire.ENOENT, "lock %q is not held by %s with cookie %q", req.Name, req.Entity, req.Cookie)
	}
	if len(st.Holders) == 0 {
		return nil, objclass.RmXattr(c, attrPrefix+req.Name)
	}
	return nil, write(c, req.Name, st)
}
