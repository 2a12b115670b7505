package ops

import (
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// Object classes: Go methods that run on the primary inside a request's
// execution (OpCall, Name "class.method"), so that a read-modify-write of
// one object is atomic without a round trip, as Ceph's cls modules are.

// Method is one object-class method. Write methods may change the object
// through their MethodContext; a read-only method that tries to fails
// with EPERM, so it can be served like a read.
type Method struct {
	Write bool
	// Run takes the op's input and returns its output, or an error made
	// with Errorf (its errno fails the request) or returned by the
	// context (passed on as it is).
	Run func(mc *MethodContext, in []byte) ([]byte, error)
}

// Registry holds the object classes an OSD offers. Register methods before
// the OSD serves requests; lookups are then read-only and safe for
// concurrent use.
type Registry struct {
	methods map[string]Method
}

// NewRegistry returns an empty registry. Builtin returns one with the
// classes this package ships.
func NewRegistry() *Registry { return &Registry{methods: map[string]Method{}} }

// Builtin returns a registry holding the lock and version classes.
func Builtin() *Registry {
	r := NewRegistry()
	registerLock(r)
	registerVersion(r)
	return r
}

// Register adds class.method. It fails if the name is taken or malformed.
func (r *Registry) Register(class, method string, m Method) error {
	if class == "" || method == "" || strings.Contains(class, ".") || m.Run == nil {
		return fmt.Errorf("ops: bad class method %q.%q", class, method)
	}
	name := class + "." + method
	if _, dup := r.methods[name]; dup {
		return fmt.Errorf("ops: class method %s registered twice", name)
	}
	r.methods[name] = m
	return nil
}

// Lookup returns the method named "class.method".
func (r *Registry) Lookup(name string) (Method, bool) {
	if r == nil {
		return Method{}, false
	}
	m, ok := r.methods[name]
	return m, ok
}

// IsWrite reports whether a request with these ops may change its object:
// a write op, or a call of a write method (or of an unknown one, which
// fails anyway).
func (r *Registry) IsWrite(ops []wire.ObjectOp) bool {
	for i := range ops {
		switch {
		case ops[i].Code.IsWrite():
			return true
		case ops[i].Code == wire.OpCall:
			if m, ok := r.Lookup(ops[i].Name); !ok || m.Write {
				return true
			}
		}
	}
	return false
}

// Errorf returns a class method error that fails the request with code.
func Errorf(code int32, format string, args ...any) error { return fail(code, format, args...) }

// MethodContext is a running method's view of its object: the same ops a
// client sends, applied within the calling request.
type MethodContext struct {
	x     *executor
	write bool
}

// Caller is the entity that sent the request.
func (mc *MethodContext) Caller() string { return mc.x.env.Caller }

// Now is the request's time, in Unix nanoseconds.
func (mc *MethodContext) Now() int64 { return mc.x.env.Now.UnixNano() }

// Exists reports whether the object exists.
func (mc *MethodContext) Exists() bool { return mc.x.exists }

// Version is the object's current version.
func (mc *MethodContext) Version() wire.Version { return mc.x.info.Version }

// Do runs op on the object; its failure, if any, is returned as an error
// a method may return as it is or handle.
func (mc *MethodContext) Do(op wire.ObjectOp) (wire.ObjectOpResult, error) {
	switch {
	case op.Code == wire.OpCall:
		return wire.ObjectOpResult{}, fail(wire.EINVAL, "class methods cannot call methods")
	case op.Code.IsWrite() && !mc.write:
		return wire.ObjectOpResult{}, fail(wire.EPERM, "read-only method tried %v", op.Code)
	}
	return mc.x.run(&op)
}

func (x *executor) call(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	m, ok := x.env.Classes.Lookup(op.Name)
	if !ok {
		return wire.ObjectOpResult{}, fail(wire.ENOTSUP, "no class method %q", op.Name)
	}
	out, err := m.Run(&MethodContext{x: x, write: m.Write}, op.Data)
	if err != nil {
		return wire.ObjectOpResult{}, err
	}
	return wire.ObjectOpResult{Data: out}, nil
}
