package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

// PageSize is the unit in which the suite expects engines to report
// allocation (see the package comment).
const PageSize = 4096

// suite lists Run's subtests by name.
var suite = []struct {
	name string
	fn   func(*env)
}{
	{"EmptyStore", testEmptyStore},
	{"Collections", testCollections},
	{"CollectionErrors", testCollectionErrors},
	{"RemoveAndRecreateCollection", testRecreateCollection},
	{"MissingCollection", testMissingCollection},
	{"MissingObject", testMissingObject},
	{"WriteRead", testWriteRead},
	{"ReadRanges", testReadRanges},
	{"Zero", testZero},
	{"Truncate", testTruncate},
	{"TouchAndRemove", testTouchRemove},
	{"LargeSparseObject", testLargeSparse},
	{"ExtentMap", testExtentMap},
	{"Attrs", testAttrs},
	{"Omap", testOmap},
	{"OmapRmKeyRange", testOmapRmKeyRange},
	{"OmapIterate", testOmapIterate},
	{"OmapIterateLarge", testOmapIterateLarge},
	{"Clone", testClone},
	{"CloneRange", testCloneRange},
	{"Move", testMove},
	{"SplitCollection", testSplit},
	{"MergeCollection", testMerge},
	{"Validate", testValidate},
	{"Atomicity", testAtomicity},
	{"OpsSeeEarlierOps", testOpsSeeEarlier},
	{"QueueOrder", testQueueOrder},
	{"Completion", testCompletion},
	{"CanceledContext", testCanceledContext},
	{"NoAliasing", testNoAliasing},
	{"ListOrder", testListOrder},
	{"ListCursors", testListCursors},
	{"StatFS", testStatFS},
	{"NoSpace", testNoSpace},
	{"Concurrency", testConcurrency},
	{"Close", testClose},
}

// Run runs the conformance suite against the stores open returns, one
// subtest per behaviour. open must return a new, empty store each time;
// the suite closes it at the end of the subtest (a Close returning
// ErrClosed is fine), and open may register its own cleanup.
func Run(t *testing.T, open func(t *testing.T) objectstore.Store) {
	for _, tc := range suite {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil && !errors.Is(err, objectstore.ErrClosed) {
					t.Errorf("close: %v", err)
				}
			})
			tc.fn(&env{T: t, s: s, ctx: context.Background()})
		})
	}
}

// env is one subtest's store with helpers that fail the test on error.
type env struct {
	*testing.T
	s   objectstore.Store
	ctx context.Context
}

// The collections and objects most tests use.
var (
	pgA  = objectstore.PGCollection(1, 0)
	pgB  = objectstore.PGCollection(1, 1)
	tmpA = objectstore.TempCollection(1, 0)
	pgC  = objectstore.PGCollection(9, 9) // never created
)

func obj(name string) objid.ID { return objid.Object(1, "", name) }

func txn() *objectstore.Transaction { return new(objectstore.Transaction) }

// pattern returns n bytes that differ with seed and position and are
// never all zero.
func pattern(seed byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+int(seed)*13) | 1
	}
	return b
}

func (e *env) apply(t *objectstore.Transaction) {
	e.Helper()
	if err := objectstore.Apply(e.ctx, e.s, t); err != nil {
		e.Fatalf("apply: %v", err)
	}
}

// applyErr applies t and requires it to fail with want.
func (e *env) applyErr(t *objectstore.Transaction, want error) {
	e.Helper()
	err := objectstore.Apply(e.ctx, e.s, t)
	if !errors.Is(err, want) {
		e.Fatalf("apply: got error %v, want %v", err, want)
	}
}

// setup creates the collections.
func (e *env) setup(cs ...objectstore.CollectionID) {
	e.Helper()
	t := txn()
	for _, c := range cs {
		t.CreateCollection(c)
	}
	e.apply(t)
}

func (e *env) read(c objectstore.CollectionID, o objid.ID, off, length uint64) []byte {
	e.Helper()
	b, err := e.s.Read(e.ctx, c, o, off, length)
	if err != nil {
		e.Fatalf("read %v %v %d+%d: %v", c, o, off, length, err)
	}
	return b
}

// wantData requires o's whole content to be want.
func (e *env) wantData(c objectstore.CollectionID, o objid.ID, want []byte) {
	e.Helper()
	if got := e.read(c, o, 0, 0); !bytes.Equal(got, want) {
		e.Fatalf("%v %v: read %d bytes %s, want %d bytes %s", c, o, len(got), abbrev(got), len(want), abbrev(want))
	}
	if st := e.stat(c, o); st.Size != uint64(len(want)) {
		e.Fatalf("%v %v: size %d, want %d", c, o, st.Size, len(want))
	}
}

func abbrev(b []byte) string {
	if len(b) > 32 {
		return fmt.Sprintf("%x...", b[:32])
	}
	return fmt.Sprintf("%x", b)
}

func (e *env) stat(c objectstore.CollectionID, o objid.ID) objectstore.ObjectInfo {
	e.Helper()
	st, err := e.s.Stat(e.ctx, c, o)
	if err != nil {
		e.Fatalf("stat %v %v: %v", c, o, err)
	}
	return st
}

// exists reports whether o exists, failing on errors other than
// ErrNotFound.
func (e *env) exists(c objectstore.CollectionID, o objid.ID) bool {
	e.Helper()
	_, err := e.s.Stat(e.ctx, c, o)
	if errors.Is(err, objectstore.ErrNotFound) {
		return false
	}
	if err != nil {
		e.Fatalf("stat %v %v: %v", c, o, err)
	}
	return true
}

func (e *env) list(c objectstore.CollectionID) []objid.ID {
	e.Helper()
	objs, next, err := e.s.ListObjects(e.ctx, c, objid.ID{}, 0)
	if err != nil {
		e.Fatalf("list %v: %v", c, err)
	}
	if !next.IsMax() {
		e.Fatalf("list %v with no limit: next %v, want MAX", c, next)
	}
	return objs
}

func (e *env) statfs() objectstore.FSStats {
	e.Helper()
	st, err := e.s.StatFS(e.ctx)
	if err != nil {
		e.Fatalf("statfs: %v", err)
	}
	return st
}

// wantErr fails unless err is classed as want (nil for success).
func (e *env) wantErr(what string, err, want error) {
	e.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		e.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}
