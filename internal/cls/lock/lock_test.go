package lock_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/cls/clstest"
	"github.com/cuttlestore/cuttle/internal/cls/lock"
	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/wire"
)

func newObject(t *testing.T) *clstest.Object {
	r := objclass.NewRegistry()
	if err := lock.Register(r); err != nil {
		t.Fatal(err)
	}
	return clstest.New(t, r)
}

func call(method string, req lock.Request) wire.ObjectOp {
	return clstest.Call(lock.Class+"."+method, req.Encode())
}

// info returns the lock's state as lock.info reports it.
func info(t *testing.T, o *clstest.Object, name string) lock.State {
	t.Helper()
	st, err := lock.DecodeState(o.OK(call("info", lock.Request{Name: name})).Ops[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func holders(st lock.State) []string {
	var hs []string
	for _, h := range st.Holders {
		hs = append(hs, h.Entity+"/"+h.Cookie)
	}
	return hs
}

func TestExclusive(t *testing.T) {
	o := newObject(t)
	excl := lock.Request{Name: "leader", Type: lock.Exclusive, Cookie: "c1"}
	if st := info(t, o, "leader"); st.Type != 0 || len(st.Holders) != 0 {
		t.Fatalf("info of a lock on a missing object: %+v", st)
	}
	o.OK(call("lock", excl)) // creates the object
	o.OK(call("lock", excl)) // the holder locking again renews
	o.Caller = "client.2"
	o.Fails(wire.EBUSY, 0, call("lock", excl))
	o.Fails(wire.EBUSY, 0, call("lock", lock.Request{Name: "leader", Type: lock.Shared, Cookie: "c1"}))
	o.Fails(wire.ENOENT, 0, call("unlock", excl)) // not client.2's
	// Other names are other locks.
	o.OK(call("lock", lock.Request{Name: "other", Type: lock.Exclusive, Cookie: "c1"}))
	st := info(t, o, "leader")
	if st.Type != lock.Exclusive || !slices.Equal(holders(st), []string{"client.1/c1"}) || st.Holders[0].Expires != 0 {
		t.Fatalf("info %+v", st)
	}
	o.Caller = "client.1"
	o.OK(call("unlock", excl))
	if st := info(t, o, "leader"); st.Type != 0 || len(st.Holders) != 0 {
		t.Fatalf("info after unlock %+v", st)
	}
	if _, ok := o.Xattrs()["lock.leader"]; ok {
		t.Fatal("the last unlock left the lock's attribute")
	}
	o.Fails(wire.ENOENT, 0, call("unlock", excl))
}

func TestCookieMismatch(t *testing.T) {
	o := newObject(t)
	o.OK(call("lock", lock.Request{Name: "l", Type: lock.Exclusive, Cookie: "a"}))
	// The same entity with another cookie is another holder: it neither
	// shares the exclusive lock nor unlocks it.
	o.Fails(wire.EBUSY, 0, call("lock", lock.Request{Name: "l", Type: lock.Exclusive, Cookie: "b"}))
	o.Fails(wire.ENOENT, 0, call("unlock", lock.Request{Name: "l", Cookie: "b"}))
	// A holder asking for the other type is refused, even alone.
	o.Fails(wire.EBUSY, 0, call("lock", lock.Request{Name: "l", Type: lock.Shared, Cookie: "a"}))
	o.OK(call("unlock", lock.Request{Name: "l", Cookie: "a"}))
}

func TestShared(t *testing.T) {
	o := newObject(t)
	sh := lock.Request{Name: "readers", Type: lock.Shared, Cookie: "x"}
	o.OK(call("lock", sh))
	o.Caller = "client.2"
	o.OK(call("lock", sh))
	o.OK(call("lock", lock.Request{Name: "readers", Type: lock.Shared, Cookie: "y"}))
	o.Caller = "client.3"
	o.Fails(wire.EBUSY, 0, call("lock", lock.Request{Name: "readers", Type: lock.Exclusive, Cookie: "z"}))
	st := info(t, o, "readers")
	if st.Type != lock.Shared || !slices.Equal(holders(st), []string{"client.1/x", "client.2/x", "client.2/y"}) {
		t.Fatalf("info %+v", st)
	}
	// One holder leaving keeps the others; an exclusive lock waits for all.
	o.Caller = "client.2"
	o.OK(call("unlock", sh))
	if st := info(t, o, "readers"); !slices.Equal(holders(st), []string{"client.1/x", "client.2/y"}) {
		t.Fatalf("after one unlock %+v", st)
	}
	o.OK(call("unlock", lock.Request{Name: "readers", Cookie: "y"}))
	o.Caller = "client.1"
	o.OK(call("unlock", sh))
	o.Caller = "client.3"
	o.OK(call("lock", lock.Request{Name: "readers", Type: lock.Exclusive, Cookie: "z"}))
}

func TestExpiry(t *testing.T) {
	o := newObject(t)
	excl := lock.Request{Name: "leader", Type: lock.Exclusive, Cookie: "c", Duration: int64(time.Minute)}
	o.OK(call("lock", excl))
	if st := info(t, o, "leader"); st.Holders[0].Expires != o.Now.Add(time.Minute).UnixNano() {
		t.Fatalf("expiry %d", st.Holders[0].Expires)
	}
	// A renewal 30 s later holds for a minute from then.
	o.Now = o.Now.Add(30 * time.Second)
	o.OK(call("lock", excl))
	o.Now = o.Now.Add(59 * time.Second)
	o.Caller = "client.2"
	o.Fails(wire.EBUSY, 0, call("lock", excl))
	// At its expiry the holder is gone: info says so, and another takes it.
	o.Now = o.Now.Add(time.Second)
	if st := info(t, o, "leader"); st.Type != 0 || len(st.Holders) != 0 {
		t.Fatalf("info of an expired lock %+v", st)
	}
	o.OK(call("lock", excl))
	// The expired holder can neither unlock nor keep it.
	o.Caller = "client.1"
	o.Fails(wire.ENOENT, 0, call("unlock", excl))
	o.Fails(wire.EBUSY, 0, call("lock", excl))
	// Expired shared holders make way for an exclusive lock.
	sh := lock.Request{Name: "readers", Type: lock.Shared, Cookie: "s", Duration: int64(time.Second)}
	o.OK(call("lock", sh))
	o.Now = o.Now.Add(time.Second)
	o.Caller = "client.3"
	o.OK(call("lock", lock.Request{Name: "readers", Type: lock.Exclusive, Cookie: "s"}))
}

func TestBadRequests(t *testing.T) {
	o := newObject(t)
	o.Fails(wire.EINVAL, 0, call("lock", lock.Request{Name: "l", Type: 7}))
	o.Fails(wire.EINVAL, 0, call("lock", lock.Request{Type: lock.Exclusive}))
	o.Fails(wire.EINVAL, 0, clstest.Call("lock.lock", []byte("junk")))
	o.Fails(wire.ENOTSUP, 0, clstest.Call("lock.nope", nil))
	// A damaged lock attribute is EIO, not a free lock.
	o.OK(wire.ObjectOp{Code: wire.OpSetXattr, Name: "lock.l", Data: []byte("junk")})
	o.Fails(wire.EIO, 0, call("lock", lock.Request{Name: "l", Type: lock.Exclusive}))
}

func TestWriteMethods(t *testing.T) {
	r := objclass.NewRegistry()
	if err := lock.Register(r); err != nil {
		t.Fatal(err)
	}
	for method, write := range map[string]bool{"lock": true, "unlock": true, "info": false, "break_lock": true} {
		if got := r.IsWrite([]wire.ObjectOp{call(method, lock.Request{})}); got != write {
			t.Errorf("IsWrite(lock.%s) = %v", method, got)
		}
	}
	if err := lock.Register(r); err == nil {
		t.Fatal("registered the lock class twice")
	}
}

// FuzzDecoders: the decoders never panic and round-trip.
func FuzzDecoders(f *testing.F) {
	f.Add(lock.Request{Name: "l", Type: 1, Cookie: "c", Duration: 5}.Encode())
	f.Add(lock.State{Type: 2, Holders: []lock.Holder{{"client.1", "c", 9}}}.Encode())
	f.Add(lock.BreakRequest{Name: "l", Entity: "client.1", Cookie: "c"}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := lock.DecodeBreakRequest(b); err == nil {
			if again, err := lock.DecodeBreakRequest(r.Encode()); err != nil || again != r {
				t.Fatalf("break request round trip: %v", err)
			}
		}
		if r, err := lock.DecodeRequest(b); err == nil {
			if again, err := lock.DecodeRequest(r.Encode()); err != nil || again != r {
				t.Fatalf("request round trip: %v", err)
			}
		}
		if s, err := lock.DecodeState(b); err == nil {
			if again, err := lock.DecodeState(s.Encode()); err != nil || !slices.Equal(again.Holders, s.Holders) || again.Type != s.Type {
				t.Fatalf("state round trip: %v", err)
			}
		}
	})
}

// Breaking: another client removes a named holder; the lock is free for
// it; a holder that is not there is ENOENT.
func TestBreak(t *testing.T) {
	o := newObject(t)
	excl := lock.Request{Name: "l", Type: lock.Exclusive, Cookie: "c1"}
	brk := func(entity, cookie string) wire.ObjectOp {
		return clstest.Call("lock.break_lock", lock.BreakRequest{Name: "l", Entity: entity, Cookie: cookie}.Encode())
	}
	o.OK(call("lock", excl))
	o.Caller = "client.2"
	o.Fails(wire.EBUSY, 0, call("lock", excl))
	o.Fails(wire.ENOENT, 0, brk("client.1", "other cookie"))
	o.Fails(wire.ENOENT, 0, brk("client.3", "c1"))
	o.OK(brk("client.1", "c1"))
	if st := info(t, o, "l"); len(st.Holders) != 0 {
		t.Fatalf("info after break %+v", st)
	}
	o.Fails(wire.ENOENT, 0, brk("client.1", "c1"))
	o.OK(call("lock", excl))
	if st := info(t, o, "l"); !slices.Equal(holders(st), []string{"client.2/c1"}) {
		t.Fatalf("info after the breaker locked %+v", st)
	}
	// Breaking one of two shared holders keeps the other.
	sh := lock.Request{Name: "s", Type: lock.Shared, Cookie: "x"}
	o.OK(call("lock", sh))
	o.Caller = "client.1"
	o.OK(call("lock", sh))
	o.OK(clstest.Call("lock.break_lock", lock.BreakRequest{Name: "s", Entity: "client.2", Cookie: "x"}.Encode()))
	if st := info(t, o, "s"); !slices.Equal(holders(st), []string{"client.1/x"}) || st.Type != lock.Shared {
		t.Fatalf("info after breaking a shared holder %+v", st)
	}
	o.Fails(wire.EINVAL, 0, clstest.Call("lock.break_lock", []byte("junk")))
}
