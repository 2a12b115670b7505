package ops

import (
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// Object-class calls (OpCall, Name "class.method"): the method comes from
// the Env's registry and runs inside this execution, seeing the object
// through a methodContext.

func (x *executor) call(op *wire.ObjectOp) (wire.ObjectOpResult, error) {
	out, err := x.env.Classes.Call(methodContext{x}, op.Name, op.Data)
	if err != nil {
		return wire.ObjectOpResult{}, err
	}
	return wire.ObjectOpResult{Data: out}, nil
}

// methodContext is the objclass.Context of a method running in x: its ops
// run as the request's own do, on the object as the request has left it
// so far. Registry.Call guards it (no calls, no writes from read-only
// methods).
type methodContext struct{ x *executor }

var _ objclass.Context = methodContext{}

func (c methodContext) Caller() string        { return c.x.env.Caller }
func (c methodContext) Now() int64            { return c.x.env.Now.UnixNano() }
func (c methodContext) Exists() bool          { return c.x.exists }
func (c methodContext) Version() wire.Version { return c.x.info.Version }

func (c methodContext) Do(op wire.ObjectOp) (wire.ObjectOpResult, error) { return c.x.run(&op) }
