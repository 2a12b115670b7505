package objclass_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// recorder is a Context that records the ops it is asked to run.
type recorder struct{ ops []wire.ObjectOp }

func (r *recorder) Caller() string        { return "client.1" }
func (r *recorder) Now() int64            { return 1 }
func (r *recorder) Exists() bool          { return true }
func (r *recorder) Version() wire.Version { return wire.Version{} }
func (r *recorder) Do(op wire.ObjectOp) (wire.ObjectOpResult, error) {
	r.ops = append(r.ops, op)
	return wire.ObjectOpResult{}, nil
}

// doMethod is a method that runs op through its context.
func doMethod(op wire.ObjectOp) func(objclass.Context, []byte) ([]byte, error) {
	return func(c objclass.Context, _ []byte) ([]byte, error) {
		_, err := c.Do(op)
		return nil, err
	}
}

func echo(_ objclass.Context, in []byte) ([]byte, error) { return in, nil }

func TestRegister(t *testing.T) {
	r := objclass.NewRegistry()
	if err := r.Register("a", "b", objclass.Method{Run: echo}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("a", "b", objclass.Method{Write: true, Run: echo}); !errors.Is(err, objclass.ErrRegistered) {
		t.Fatalf("registering a.b twice: %v", err)
	}
	if m, ok := r.Lookup("a.b"); !ok || m.Write {
		t.Fatalf("a.b after a duplicate registration: %+v %v", m, ok)
	}
	for _, bad := range []struct {
		class, method string
		run           func(objclass.Context, []byte) ([]byte, error)
	}{{"", "b", echo}, {"a.x", "b", echo}, {"a", "", echo}, {"a", "c", nil}} {
		if err := r.Register(bad.class, bad.method, objclass.Method{Run: bad.run}); err == nil || errors.Is(err, objclass.ErrRegistered) {
			t.Errorf("Register(%q, %q): %v", bad.class, bad.method, err)
		}
	}
	if _, ok := r.Lookup("a"); ok {
		t.Error("looked up a class name as a method")
	}
	var none *objclass.Registry
	if _, ok := none.Lookup("a.b"); ok {
		t.Error("a nil registry has a method")
	}
}

func TestIsWrite(t *testing.T) {
	r := objclass.NewRegistry()
	for name, write := range map[string]bool{"read": false, "write": true} {
		if err := r.Register("t", name, objclass.Method{Write: write, Run: echo}); err != nil {
			t.Fatal(err)
		}
	}
	call := func(name string) wire.ObjectOp { return wire.ObjectOp{Code: wire.OpCall, Name: name} }
	for _, tc := range []struct {
		ops   []wire.ObjectOp
		write bool
	}{
		{[]wire.ObjectOp{call("t.read"), {Code: wire.OpRead}}, false},
		{[]wire.ObjectOp{call("t.read"), call("t.write")}, true},
		{[]wire.ObjectOp{call("t.read"), {Code: wire.OpSetXattr}}, true},
		{[]wire.ObjectOp{call("x.y")}, true}, // unknown: fails anyway, so may write
	} {
		if got := r.IsWrite(tc.ops); got != tc.write {
			t.Errorf("IsWrite(%v) = %v", tc.ops, got)
		}
	}
	var none *objclass.Registry
	if !none.IsWrite([]wire.ObjectOp{call("t.read")}) || none.IsWrite([]wire.ObjectOp{{Code: wire.OpStat}}) {
		t.Error("IsWrite of a nil registry")
	}
}

// TestCall checks the errnos a call fails with, which the OSD returns to
// the client as the op's result.
func TestCall(t *testing.T) {
	r := objclass.NewRegistry()
	methods := map[string]objclass.Method{
		"echo":      {Run: echo},
		"readonly":  {Run: doMethod(wire.ObjectOp{Code: wire.OpWrite, Data: []byte("x")})},
		"reads":     {Run: doMethod(wire.ObjectOp{Code: wire.OpGetXattr, Name: "a"})},
		"writes":    {Write: true, Run: doMethod(wire.ObjectOp{Code: wire.OpWrite, Data: []byte("x")})},
		"recursive": {Write: true, Run: doMethod(wire.ObjectOp{Code: wire.OpCall, Name: "t.echo"})},
		"fails":     {Run: func(objclass.Context, []byte) ([]byte, error) { return nil, objclass.Errorf(wire.EBUSY, "busy") }},
	}
	for name, m := range methods {
		if err := r.Register("t", name, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		code int32 // 0: succeeds
		ran  int   // ops that reached the context
	}{
		{"t.echo", 0, 0},
		{"t.reads", 0, 1},
		{"t.writes", 0, 1},
		{"t.readonly", wire.EPERM, 0},
		{"t.recursive", wire.EINVAL, 0},
		{"t.fails", wire.EBUSY, 0},
		{"t.nope", wire.ENOTSUP, 0},
		{"nope", wire.ENOTSUP, 0},
	} {
		rec := &recorder{}
		out, err := r.Call(rec, tc.name, []byte("in"))
		code, isErrno := objclass.Code(err)
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.code != 0 && (!isErrno || code != tc.code):
			t.Errorf("%s: %v, want errno %d", tc.name, err, tc.code)
		case len(rec.ops) != tc.ran:
			t.Errorf("%s: %d ops reached the object, want %d", tc.name, len(rec.ops), tc.ran)
		}
		if tc.name == "t.echo" && string(out) != "in" {
			t.Errorf("echo returned %q", out)
		}
	}
	var none *objclass.Registry
	if _, err := none.Call(&recorder{}, "t.echo", nil); !isCode(err, wire.ENOTSUP) {
		t.Errorf("call with a nil registry: %v", err)
	}
}

func isCode(err error, want int32) bool {
	code, ok := objclass.Code(err)
	return ok && code == want
}

func TestCode(t *testing.T) {
	err := objclass.Errorf(wire.ECANCELED, "version is %d", 3)
	if !isCode(err, wire.ECANCELED) || err.Error() != "version is 3 (errno 125)" {
		t.Fatalf("Errorf: %v", err)
	}
	if !isCode(fmt.Errorf("method: %w", err), wire.ECANCELED) {
		t.Fatal("a wrapped errno lost its code")
	}
	if code, ok := objclass.Code(errors.New("disk on fire")); ok || code != 0 {
		t.Fatal("a store error read as an errno")
	}
	if _, ok := objclass.Code(nil); ok {
		t.Fatal("nil read as an errno")
	}
}
