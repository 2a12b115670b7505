// Package clstest runs object-class methods the way an OSD's primary does,
// for the classes' own tests: an Object is one object in a memstore, and
// each request runs through internal/osd/ops.Execute with the classes of
// a registry, its transaction applied when the request succeeds. So a
// class is tested against the executor it runs in, not a fake of it.
//
// It owns no class and no OSD state beyond the one object. It is imported
// only by _test.go files (archtest enforces it). An Object belongs to one
// test goroutine.
package clstest

import (
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/cls/objclass"
	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/internal/objectstore/memstore"
	"github.com/cuttlestore/cuttle/internal/osd/ops"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"
)

// Object is one object of a PG collection in a memstore. Tests may change
// Caller and Now between requests, as different clients at different
// times.
type Object struct {
	t       testing.TB
	classes *objclass.Registry
	store   objectstore.Store
	coll    objectstore.CollectionID
	obj     objid.ID
	counter uint64 // gives every request a new version
	// Caller is the entity requests come from (default "client.1").
	Caller string
	// Now is the requests' time (default Unix second 1000).
	Now time.Time
}

// New returns an object that does not exist yet, whose requests may call
// the methods of classes.
func New(t testing.TB, classes *objclass.Registry) *Object {
	t.Helper()
	s := memstore.New(memstore.Options{})
	t.Cleanup(func() { s.Close() })
	coll := objectstore.PGCollection(1, 0)
	var txn objectstore.Transaction
	txn.CreateCollection(coll)
	if err := objectstore.Apply(t.Context(), s, &txn); err != nil {
		t.Fatal(err)
	}
	return &Object{t: t, classes: classes, store: s, coll: coll, obj: objid.Object(1, "", "obj"),
		Caller: "client.1", Now: time.Unix(1000, 0)}
}

// Call is the op that calls method ("class.method") with input in.
func Call(method string, in []byte) wire.ObjectOp {
	return wire.ObjectOp{Code: wire.OpCall, Name: method, Data: in}
}

// Do runs a request of ops and applies its transaction if it succeeded.
// A failure of the store fails the test.
func (o *Object) Do(req ...wire.ObjectOp) *ops.Result {
	o.t.Helper()
	o.counter++
	env := &ops.Env{Store: o.store, Collection: o.coll, Object: o.obj, Classes: o.classes,
		Version: wire.Version{Epoch: 1, Counter: o.counter}, Now: o.Now, Caller: o.Caller}
	res, err := ops.Execute(o.t.Context(), env, req)
	if err != nil {
		o.t.Fatalf("execute %v: %v", req, err)
	}
	if res.Code == 0 && !res.Txn.Empty() {
		if err := objectstore.Apply(o.t.Context(), o.store, &res.Txn); err != nil {
			o.t.Fatalf("apply: %v", err)
		}
	}
	return res
}

// OK runs a request and fails the test unless every op succeeds.
func (o *Object) OK(req ...wire.ObjectOp) *ops.Result {
	o.t.Helper()
	res := o.Do(req...)
	if res.Code != 0 {
		o.t.Fatalf("%v failed at op %d: errno %d", req, res.FailedOp, res.Code)
	}
	return res
}

// Fails runs a request and fails the test unless it fails with errno code
// at op index at, with nothing applied.
func (o *Object) Fails(code int32, at int, req ...wire.ObjectOp) {
	o.t.Helper()
	res := o.Do(req...)
	if res.Code != code || res.FailedOp != at || res.Ops[at].Result != -code {
		o.t.Fatalf("%v: errno %d at op %d, want %d at %d", req, res.Code, res.FailedOp, code, at)
	}
	if !res.Txn.Empty() {
		o.t.Fatalf("%v: a failed request kept its transaction", req)
	}
}

// Xattrs returns the object's user attributes.
func (o *Object) Xattrs() map[string][]byte {
	o.t.Helper()
	attrs := map[string][]byte{}
	for _, kv := range o.OK(wire.ObjectOp{Code: wire.OpGetXattrs}).Ops[0].Pairs {
		attrs[kv.Key] = kv.Value
	}
	return attrs
}
