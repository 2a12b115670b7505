package objectstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cuttlestore/cuttle/internal/objectstore"
	"github.com/cuttlestore/cuttle/objid"
)

func TestValidate(t *testing.T) {
	pg := objectstore.PGCollection(1, 2)
	o, p := objid.Object(1, "", "o"), objid.Object(1, "", "p")
	long := objid.Object(1, "", strings.Repeat("x", objid.MaxNameLen+1))
	const max = objectstore.MaxObjectSize
	for _, c := range []struct {
		name string
		t    *objectstore.Transaction
		ok   bool
	}{
		{"empty", new(objectstore.Transaction), true},
		{"every builder", new(objectstore.Transaction).CreateCollection(pg).Touch(pg, o).Write(pg, o, 0, []byte("x")).
			Zero(pg, o, 0, 1).Truncate(pg, o, 1).Clone(pg, o, p).CloneRange(pg, o, p, 0, 1, 0).SetAttr(pg, o, "a", nil).
			RmAttr(pg, o, "a").OmapSetKeys(pg, o, nil).OmapRmKeys(pg, o, "k").OmapRmKeyRange(pg, o, "a", "b").
			OmapClear(pg, o).OmapSetHeader(pg, o, nil).Move(pg, o, objectstore.TempCollection(1, 2), p).
			Remove(pg, p).RemoveCollection(pg), true},
		{"meta", new(objectstore.Transaction).Touch(objectstore.MetaCollection, o), true},
		{"write to the maximum", new(objectstore.Transaction).Write(pg, o, max-1, []byte("x")), true},
		{"truncate to the maximum", new(objectstore.Transaction).Truncate(pg, o, max), true},
		{"write past the maximum", new(objectstore.Transaction).Write(pg, o, max, []byte("x")), false},
		{"zero overflowing", new(objectstore.Transaction).Zero(pg, o, ^uint64(0), 2), false},
		{"truncate past", new(objectstore.Transaction).Truncate(pg, o, max+1), false},
		{"clone_range source past", new(objectstore.Transaction).CloneRange(pg, o, p, max, 1, 0), false},
		{"clone_range dest past", new(objectstore.Transaction).CloneRange(pg, o, p, 0, 2, max-1), false},
		{"op code 0", &objectstore.Transaction{Ops: []objectstore.Op{{Collection: pg, Object: o}}}, false},
		{"op code too big", &objectstore.Transaction{Ops: []objectstore.Op{{Code: objectstore.OpSplitCollection + 1, Collection: pg}}}, false},
		{"bad collection", new(objectstore.Transaction).Touch(objectstore.CollectionID{Kind: 3}, o), false},
		{"meta with seed", new(objectstore.Transaction).CreateCollection(objectstore.CollectionID{Seed: 1}), false},
		{"negative pool", new(objectstore.Transaction).Touch(objectstore.PGCollection(-2, 0), o), false},
		{"long name", new(objectstore.Transaction).Touch(pg, long), false},
		{"long clone destination", new(objectstore.Transaction).Clone(pg, o, long), false},
		{"max object", new(objectstore.Transaction).Write(pg, objid.Max(), 0, nil), false},
		{"max move destination", new(objectstore.Transaction).Move(pg, o, pg, objid.Max()), false},
		{"bad move collection", new(objectstore.Transaction).Move(pg, o, objectstore.CollectionID{Kind: 9}, p), false},
		{"split", new(objectstore.Transaction).SplitCollection(pg, objectstore.PGCollection(1, 9), 4, 9), true},
		{"split of all 32 bits", new(objectstore.Transaction).SplitCollection(pg, objectstore.PGCollection(1, 9), 32, 0xffffffff), true},
		{"split into itself", new(objectstore.Transaction).SplitCollection(pg, pg, 4, 9), false},
		{"split value past its bits", new(objectstore.Transaction).SplitCollection(pg, objectstore.PGCollection(1, 9), 3, 9), false},
		{"split of 33 bits", new(objectstore.Transaction).SplitCollection(pg, objectstore.PGCollection(1, 9), 33, 0), false},
		{"split of meta", new(objectstore.Transaction).SplitCollection(objectstore.MetaCollection, pg, 1, 0), false},
		{"split into temp", new(objectstore.Transaction).SplitCollection(pg, objectstore.TempCollection(1, 9), 4, 9), false},
		{"later op bad", new(objectstore.Transaction).Touch(pg, o).Touch(pg, long), false},
	} {
		err := c.t.Validate()
		if c.ok && err != nil || !c.ok && !errors.Is(err, objectstore.ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ok %v", c.name, err, c.ok)
		}
	}
	if err := new(objectstore.Transaction).Touch(pg, o).Touch(pg, long).Validate(); !strings.Contains(err.Error(), "op 1 (touch)") {
		t.Errorf("error does not name the op: %v", err)
	}
}

func TestOpCodeString(t *testing.T) {
	for c := objectstore.OpTouch; c <= objectstore.OpSplitCollection; c++ {
		if s := c.String(); s == "op?" || s == "" {
			t.Errorf("op code %d has no name", c)
		}
	}
	if s := (objectstore.OpSplitCollection + 1).String(); s != "op?" {
		t.Errorf("unknown op code prints %q", s)
	}
}

func TestCollectionIDRoundTrip(t *testing.T) {
	for _, c := range []objectstore.CollectionID{
		objectstore.MetaCollection, objectstore.PGCollection(0, 0), objectstore.PGCollection(1, 0x1f),
		objectstore.TempCollection(1, 0x1f), objectstore.PGCollection(1<<62, 0xffffffff),
	} {
		got, err := objectstore.ParseCollectionID(c.String())
		if err != nil || got != c || !c.Valid() {
			t.Errorf("%v: parsed %v %v (valid %v)", c, got, err, c.Valid())
		}
	}
	for s, want := range map[string]string{"meta": "meta", "1.1f_head": "1.1f_head", "3.0_TEMP": "3.0_TEMP", "2.A_head": "2.a_head"} {
		if c, err := objectstore.ParseCollectionID(s); err != nil || c.String() != want {
			t.Errorf("%q: %v %v, want %s", s, c, err, want)
		}
	}
	for _, s := range []string{"", "META", "1.1f", "1_head", "x.1_head", "1.x_head", "-1.0_head", "1.100000000_head", ".0_head", "1._TEMP"} {
		if c, err := objectstore.ParseCollectionID(s); !errors.Is(err, objectstore.ErrInvalid) {
			t.Errorf("%q parsed as %v (%v)", s, c, err)
		}
	}
	if s := (objectstore.CollectionID{Kind: 9}).String(); s != "collection(kind 9)" {
		t.Errorf("unknown kind prints %q", s)
	}
}

func FuzzParseCollectionID(f *testing.F) {
	for _, s := range []string{"meta", "1.1f_head", "0.0_TEMP", "-1.0_head", "1.x_head"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := objectstore.ParseCollectionID(s)
		if err != nil {
			return
		}
		if !c.Valid() {
			t.Fatalf("%q parsed to invalid %+v", s, c)
		}
		again, err := objectstore.ParseCollectionID(c.String())
		if err != nil || again != c {
			t.Fatalf("%q -> %v -> %v %v", s, c, again, err)
		}
	})
}
