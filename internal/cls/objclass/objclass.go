package objclass

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// Method is one object-class method. Write methods may change the object
// through their Context; a read-only method that tries to fails with
// EPERM, so it can be served like a read.
type Method struct {
	Write bool
	// Run takes the op's input and returns its output, or an error made
	// with Errorf (its errno fails the request) or returned by the
	// Context (passed on as it is).
	Run func(c Context, in []byte) ([]byte, error)
}

// Registry holds the object classes an OSD offers. Register methods before
// the OSD serves requests; lookups and calls are then read-only and safe
// for concurrent use. A nil *Registry holds no methods.
type Registry struct {
	methods map[string]Method
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{methods: map[string]Method{}} }

// ErrRegistered is returned by Register for a name already taken.
var ErrRegistered = errors.New("objclass: class method already registered")

// Register adds class.method. It fails if the name is taken
// (ErrRegistered) or malformed.
func (r *Registry) Register(class, method string, m Method) error {
	if class == "" || method == "" || strings.Contains(class, ".") || m.Run == nil {
		return fmt.Errorf("objclass: bad class method %q.%q", class, method)
	}
	name := class + "." + method
	if _, dup := r.methods[name]; dup {
		return fmt.Errorf("%w: %s", ErrRegistered, name)
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

// Call runs the method named "class.method" on the object c is the view
// of: ENOTSUP if there is none. The method sees c through a guard that
// refuses calls of methods (EINVAL) and, for a read-only method, writes
// (EPERM).
func (r *Registry) Call(c Context, name string, in []byte) ([]byte, error) {
	m, ok := r.Lookup(name)
	if !ok {
		return nil, Errorf(wire.ENOTSUP, "no class method %q", name)
	}
	return m.Run(guard{Context: c, write: m.Write}, in)
}

// guard is the Context a method runs with: the executor's, less what the
// method may not do.
type guard struct {
	Context
	write bool
}

func (g guard) Do(op wire.ObjectOp) (wire.ObjectOpResult, error) {
	switch {
	case op.Code == wire.OpCall:
		return wire.ObjectOpResult{}, Errorf(wire.EINVAL, "class methods cannot call methods")
	case op.Code.IsWrite() && !g.write:
		return wire.ObjectOpResult{}, Errorf(wire.EPERM, "read-only method tried %v", op.Code)
	}
	return g.Context.Do(op)
}
