package lock

import (
	"fmt"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Class is the class name the methods are registered under.
const Class = "lock"

// Lock types.
const (
	Exclusive uint8 = 1
	Shared    uint8 = 2
)

// Request is the input of every lock method.
type Request struct {
	Name     string
	Type     uint8
	Cookie   string
	Duration int64 // nanoseconds; 0 holds until unlocked
}

// Holder is one holder of a lock.
type Holder struct {
	Entity  string
	Cookie  string
	Expires int64 // Unix nanoseconds; 0 never
}

// State is a lock's type and holders, as lock.info returns it.
type State struct {
	Type    uint8
	Holders []Holder
}

// attrPrefix names a lock's attribute.
const attrPrefix = "lock."

// Decoding bounds: maxNameLen is the OSD's bound on an attribute's name
// (a lock name longer than it cannot be stored), maxKeyLen the bound on
// cookies and entities.
const (
	maxNameLen = 100
	maxKeyLen  = 4096
)

// Encode encodes r: version 1: name, type, cookie, duration.
func (r Request) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(r.Name)
	e.Uint8(r.Type)
	e.String(r.Cookie)
	e.Varint(r.Duration)
	e.End(mk)
	return e.Data()
}

// DecodeRequest decodes what Encode wrote.
func DecodeRequest(b []byte) (Request, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	r := Request{Name: d.String(maxNameLen), Type: d.Uint8(), Cookie: d.String(maxKeyLen), Duration: d.Varint()}
	d.End()
	if err := d.Finish(); err != nil {
		return Request{}, fmt.Errorf("lock request: %w", err)
	}
	return r, nil
}

// Encode encodes s: version 1: type, holders (entity, cookie, expires).
func (s State) Encode() []byte {
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

// DecodeState decodes what Encode wrote.
func DecodeState(b []byte) (State, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	s := State{Type: d.Uint8()}
	n := d.Count(3)
	for i := 0; i < n && d.Err() == nil; i++ {
		s.Holders = append(s.Holders, Holder{Entity: d.String(maxKeyLen), Cookie: d.String(maxKeyLen), Expires: d.Varint()})
	}
	d.End()
	if err := d.Finish(); err != nil {
		return State{}, fmt.Errorf("lock state: %w", err)
	}
	return s, nil
}

// Register adds the lock class's methods to r.
func Register(r *objclass.Registry) error {
	for _, m := range []struct {
		name string
		m    objclass.Method
	}{
		{"lock", objclass.Method{Write: true, Run: lock}},
		{"unlock", objclass.Method{Write: true, Run: unlock}},
		{"info", objclass.Method{Run: info}},
		{"break_lock", objclass.Method{Write: true, Run: breakLock}},
	} {
		if err := r.Register(Class, m.name, m.m); err != nil {
			return err
		}
	}
	return nil
}

// read decodes the request and the lock's live state (expired holders
// dropped).
func read(c objclass.Context, in []byte) (Request, State, error) {
	req, err := DecodeRequest(in)
	if err != nil {
		return Request{}, State{}, objclass.Errorf(wire.EINVAL, "%v", err)
	}
	if req.Name == "" {
		return Request{}, State{}, objclass.Errorf(wire.EINVAL, "lock name is empty")
	}
	if !c.Exists() {
		return req, State{}, nil
	}
	b, ok, err := objclass.GetXattr(c, attrPrefix+req.Name)
	if err != nil || !ok {
		return req, State{}, err
	}
	st, err := DecodeState(b)
	if err != nil {
		return req, State{}, objclass.Errorf(wire.EIO, "lock %q: %v", req.Name, err)
	}
	now := c.Now()
	st.Holders = slices.DeleteFunc(st.Holders, func(h Holder) bool { return h.Expires != 0 && h.Expires <= now })
	return req, st, nil
}

func write(c objclass.Context, name string, st State) error {
	return objclass.SetXattr(c, attrPrefix+name, st.Encode())
}

func lock(c objclass.Context, in []byte) ([]byte, error) {
	req, st, err := read(c, in)
	if err != nil {
		return nil, err
	}
	if req.Type != Exclusive && req.Type != Shared {
		return nil, objclass.Errorf(wire.EINVAL, "lock type %d (want 1 exclusive or 2 shared)", req.Type)
	}
	me := Holder{Entity: c.Caller(), Cookie: req.Cookie}
	if req.Duration > 0 {
		me.Expires = c.Now() + req.Duration
	}
	i := slices.IndexFunc(st.Holders, func(h Holder) bool { return h.Entity == me.Entity && h.Cookie == me.Cookie })
	switch {
	case i >= 0 && st.Type == req.Type: // renewal
		st.Holders[i] = me
	case len(st.Holders) > 0 && (st.Type == Exclusive || req.Type == Exclusive):
		return nil, objclass.Errorf(wire.EBUSY, "lock %q is held by %s", req.Name, st.Holders[0].Entity)
	default:
		st.Type = req.Type
		st.Holders = append(st.Holders, me)
	}
	return nil, write(c, req.Name, st)
}

func unlock(c objclass.Context, in []byte) ([]byte, error) {
	req, st, err := read(c, in)
	if err != nil {
		return nil, err
	}
	n := len(st.Holders)
	st.Holders = slices.DeleteFunc(st.Holders, func(h Holder) bool { return h.Entity == c.Caller() && h.Cookie == req.Cookie })
	if len(st.Holders) == n {
		return nil, objclass.Errorf(wire.ENOENT, "lock %q is not held by %s with cookie %q", req.Name, c.Caller(), req.Cookie)
	}
	if len(st.Holders) == 0 {
		return nil, objclass.RmXattr(c, attrPrefix+req.Name)
	}
	return nil, write(c, req.Name, st)
}

func info(c objclass.Context, in []byte) ([]byte, error) {
	_, st, err := read(c, in)
	if err != nil {
		return nil, err
	}
	if len(st.Holders) == 0 {
		st.Type = 0
	}
	return st.Encode(), nil
}
