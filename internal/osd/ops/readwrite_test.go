package ops

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
)

// Shorthands for the read-your-own-writes table.
func opWrite(off uint64, s string) wire.ObjectOp {
	return wire.ObjectOp{Code: wire.OpWrite, Offset: off, Data: []byte(s)}
}
func opRead(off, length uint64) wire.ObjectOp {
	return wire.ObjectOp{Code: wire.OpRead, Offset: off, Length: length}
}
func opSetX(name, v string) wire.ObjectOp {
	return wire.ObjectOp{Code: wire.OpSetXattr, Name: name, Data: []byte(v)}
}
func opGetX(name string) wire.ObjectOp { return wire.ObjectOp{Code: wire.OpGetXattr, Name: name} }
func opCmpX(name, v string) wire.ObjectOp {
	return wire.ObjectOp{Code: wire.OpCmpXattr, Name: name, Data: []byte(v), Flags: uint32(wire.CmpEQ)}
}
func opOmapSet(kv ...string) wire.ObjectOp {
	op := wire.ObjectOp{Code: wire.OpOmapSet}
	for i := 0; i+1 < len(kv); i += 2 {
		op.Pairs = append(op.Pairs, wire.KV{Key: kv[i], Value: []byte(kv[i+1])})
	}
	return op
}
func opOmapCmp(kv ...string) wire.ObjectOp {
	op := opOmapSet(kv...)
	op.Code, op.Flags = wire.OpOmapCmp, uint32(wire.CmpEQ)
	return op
}
func opOmapKeys(after, prefix string, max uint64) wire.ObjectOp {
	return wire.ObjectOp{Code: wire.OpOmapGetKeys, Name: after, Prefix: prefix, Length: max}
}

// pairs renders an op result's pairs as "k=v k=v".
func pairs(r wire.ObjectOpResult) string {
	var b bytes.Buffer
	for i, kv := range r.Pairs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", kv.Key, kv.Value)
	}
	return b.String()
}

// TestReadYourWrites: within one request, every op sees what the ops
// before it did — data, size, existence, attributes, omap and header —
// and a failure anywhere discards the whole request.
func TestReadYourWrites(t *testing.T) {
	existing := []wire.ObjectOp{
		{Code: wire.OpWriteFull, Data: []byte("0123456789")},
		opSetX("a", "1"), opSetX("b", "2"),
		opOmapSet("k1", "v1", "k2", "v2", "k3", "v3", "k4", "v4"),
		{Code: wire.OpOmapSetHeader, Data: []byte("hdr")},
	}
	for _, tc := range []struct {
		name  string
		setup []wire.ObjectOp // applied first, in its own request
		ops   []wire.ObjectOp
		code  int32 // the request's errno, from op at
		at    int
		want  map[int]string // op index: its result, rendered by show
	}{
		{name: "create then cmpxattr", ops: []wire.ObjectOp{{Code: wire.OpCreate, Flags: wire.CreateExclusive}, opCmpX("x", "")}},
		{name: "create then cmpxattr mismatch", ops: []wire.ObjectOp{{Code: wire.OpCreate, Flags: wire.CreateExclusive}, opCmpX("x", "v")}, code: wire.ECANCELED, at: 1},
		{name: "create then getxattr", ops: []wire.ObjectOp{{Code: wire.OpCreate}, opGetX("x")}, code: wire.ENODATA, at: 1},
		{name: "create then getxattrs", ops: []wire.ObjectOp{{Code: wire.OpCreate}, {Code: wire.OpGetXattrs}}, want: map[int]string{1: ""}},
		{name: "create then omap", ops: []wire.ObjectOp{{Code: wire.OpCreate}, {Code: wire.OpOmapGetVals}, {Code: wire.OpOmapGetHeader}}, want: map[int]string{1: "", 2: ""}},
		{name: "write then read, new object", ops: []wire.ObjectOp{opWrite(2, "llo"), opRead(0, 0)}, want: map[int]string{1: "\x00\x00llo"}},
		{name: "write then read", setup: existing, ops: []wire.ObjectOp{opWrite(3, "ab"), opRead(0, 0), opRead(2, 3), opRead(9, 5), opRead(20, 1)},
			want: map[int]string{1: "012ab56789", 2: "2ab", 3: "9", 4: ""}},
		{name: "write then read to the end of the address space", setup: existing, ops: []wire.ObjectOp{opWrite(3, "ab"), opRead(8, ^uint64(0))}, want: map[int]string{1: "89"}},
		{name: "write past the end then read", setup: existing, ops: []wire.ObjectOp{opWrite(12, "x"), opRead(8, 0)}, want: map[int]string{1: "89\x00\x00x"}},
		{name: "writefull then read", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpWriteFull, Data: []byte("ab")}, opRead(0, 0)}, want: map[int]string{1: "ab"}},
		{name: "append then read", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpAppend, Data: []byte("!")}, opRead(8, 0)}, want: map[int]string{1: "89!"}},
		{name: "zero then read", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpZero, Offset: 1, Length: 2}, opRead(0, 4)}, want: map[int]string{1: "0\x00\x003"}},
		{name: "truncate then stat", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpTruncate, Offset: 4}, {Code: wire.OpStat}}, want: map[int]string{1: "size 4"}},
		{name: "truncate, extend, read", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpTruncate, Offset: 2}, opWrite(5, "x"), opRead(0, 0)},
			want: map[int]string{2: "01\x00\x00\x00x"}},
		{name: "truncate then sparse read", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpTruncate, Offset: 3}, {Code: wire.OpSparseRead}}, want: map[int]string{1: "012"}},
		{name: "write then sparse read, new object", ops: []wire.ObjectOp{opWrite(0, "ab"), {Code: wire.OpSparseRead, Offset: 1}}, want: map[int]string{1: "b"}},
		{name: "remove then stat", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpDelete}, {Code: wire.OpStat}}, code: wire.ENOENT, at: 1},
		{name: "remove then read", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpDelete}, opRead(0, 0)}, code: wire.ENOENT, at: 1},
		{name: "remove, recreate, read", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpDelete}, opWrite(1, "z"), opRead(0, 0), {Code: wire.OpGetXattrs},
			{Code: wire.OpOmapGetVals}, {Code: wire.OpOmapGetHeader}}, want: map[int]string{2: "\x00z", 3: "", 4: "", 5: ""}},
		{name: "remove, recreate, getxattr", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpDelete}, {Code: wire.OpCreate}, opGetX("a")}, code: wire.ENODATA, at: 2},
		{name: "setxattr then getxattr", ops: []wire.ObjectOp{opSetX("x", "v"), opGetX("x")}, want: map[int]string{1: "v"}},
		{name: "setxattr then cmpxattr", setup: existing, ops: []wire.ObjectOp{opSetX("a", "new"), opCmpX("a", "new")}},
		{name: "setxattr then cmpxattr mismatch", setup: existing, ops: []wire.ObjectOp{opSetX("a", "new"), opCmpX("a", "1")}, code: wire.ECANCELED, at: 1},
		{name: "setxattr then getxattrs", setup: existing, ops: []wire.ObjectOp{opSetX("c", "3"), {Code: wire.OpRmXattr, Name: "a"}, opSetX("b", "two"), {Code: wire.OpGetXattrs}},
			want: map[int]string{3: "b=two c=3"}},
		{name: "rmxattr then getxattr", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpRmXattr, Name: "a"}, opGetX("a")}, code: wire.ENODATA, at: 1},
		{name: "rmxattr twice", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpRmXattr, Name: "a"}, {Code: wire.OpRmXattr, Name: "a"}}, code: wire.ENODATA, at: 1},
		{name: "rmxattr, setxattr, getxattr", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpRmXattr, Name: "a"}, opSetX("a", "back"), opGetX("a")}, want: map[int]string{2: "back"}},
		{name: "omap-set then omap-get-vals", ops: []wire.ObjectOp{opOmapSet("b", "2", "a", "1"), {Code: wire.OpOmapGetVals}}, want: map[int]string{1: "a=1 b=2"}},
		{name: "omap-set then omap-cmp", ops: []wire.ObjectOp{{Code: wire.OpCreate, Flags: wire.CreateExclusive}, opOmapSet("seq", "7"), opOmapCmp("seq", "7")}},
		{name: "omap-set then omap-cmp mismatch", setup: existing, ops: []wire.ObjectOp{opOmapSet("k1", "x"), opOmapCmp("k1", "v1")}, code: wire.ECANCELED, at: 1},
		{name: "omap-rm then omap-cmp", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpOmapRmKeys, Keys: []string{"k1"}}, opOmapCmp("k1", "v1")}, code: wire.ECANCELED, at: 1},
		{name: "omap changes then get by keys", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpOmapRmKeys, Keys: []string{"k1"}}, opOmapSet("k2", "new", "k9", "v9"),
			{Code: wire.OpOmapGetByKeys, Keys: []string{"k1", "k2", "k3", "k9", "zz"}}}, want: map[int]string{2: "k2=new k3=v3 k9=v9"}},
		{name: "omap changes then listing", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpOmapRmKeys, Keys: []string{"k2", "k3"}}, opOmapSet("k1", "x", "k11", "y", "j", "z"),
			{Code: wire.OpOmapGetVals}, {Code: wire.OpOmapGetVals, Length: 2}, {Code: wire.OpOmapGetVals, Name: "k1", Prefix: "k"}, opOmapKeys("k11", "", 1), opOmapKeys("k11", "", 2)},
			want: map[int]string{2: "j=z k1=x k11=y k4=v4", 3: "j=z k1=x more", 4: "k11=y k4=v4", 5: "k4", 6: "k4"}},
		{name: "omap listing past removed keys", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpOmapRmKeys, Keys: []string{"k1", "k2", "k3"}}, {Code: wire.OpOmapGetVals, Length: 1}},
			want: map[int]string{1: "k4=v4"}},
		{name: "omap-clear then listing", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpOmapClear}, opOmapSet("n", "1"), {Code: wire.OpOmapGetVals}, {Code: wire.OpOmapGetHeader}},
			want: map[int]string{2: "n=1", 3: ""}},
		{name: "omap header", setup: existing, ops: []wire.ObjectOp{{Code: wire.OpOmapSetHeader, Data: []byte("h2")}, {Code: wire.OpOmapGetHeader}}, want: map[int]string{1: "h2"}},
		{name: "failure discards earlier writes", setup: existing, ops: []wire.ObjectOp{opWrite(0, "XX"), opSetX("a", "9"), opCmpX("b", "nope")}, code: wire.ECANCELED, at: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.setup != nil {
				f.ok(tc.setup...)
			}
			before := f.snapshot()
			if tc.code != 0 {
				f.fails(tc.code, tc.at, tc.ops...)
				if after := f.snapshot(); after != before {
					t.Fatalf("a failed request changed the object:\n%s\nwas\n%s", after, before)
				}
				return
			}
			res := f.ok(tc.ops...)
			for i, want := range tc.want {
				if got := show(tc.ops[i], res.Ops[i]); got != want {
					t.Errorf("op %d (%v) = %q, want %q", i, tc.ops[i].Code, got, want)
				}
			}
		})
	}
}

// show renders an op's result for the table.
func show(op wire.ObjectOp, r wire.ObjectOpResult) string {
	switch op.Code {
	case wire.OpStat:
		return fmt.Sprintf("size %d", r.Size)
	case wire.OpGetXattrs, wire.OpOmapGetVals, wire.OpOmapGetByKeys:
		s := pairs(r)
		if r.More {
			s += " more"
		}
		return s
	case wire.OpOmapGetKeys:
		s := fmt.Sprint(r.Keys)
		s = s[1 : len(s)-1]
		if r.More {
			s += " more"
		}
		return s
	}
	return string(r.Data)
}

// snapshot renders everything a client can see of the fixture's object.
func (f *fixture) snapshot() string {
	f.t.Helper()
	res := f.do(opRead(0, 0), wire.ObjectOp{Code: wire.OpGetXattrs}, wire.ObjectOp{Code: wire.OpOmapGetVals}, wire.ObjectOp{Code: wire.OpOmapGetHeader})
	if res.Code != 0 {
		return fmt.Sprintf("errno %d", res.Code)
	}
	return fmt.Sprintf("data %q xattrs %s omap %s header %q", res.Ops[0].Data, pairs(res.Ops[1]), pairs(res.Ops[2]), res.Ops[3].Data)
}

// TestStatAfterWrite: a stat after a write in the same request reports
// the modification time the write records.
func TestStatAfterWrite(t *testing.T) {
	f := newFixture(t)
	f.ok(opWrite(0, "abc"))
	f.now = f.now.Add(time.Hour)
	res := f.ok(wire.ObjectOp{Code: wire.OpStat}, wire.ObjectOp{Code: wire.OpAppend, Data: []byte("d")}, wire.ObjectOp{Code: wire.OpStat})
	if st := res.Ops[0]; st.Size != 3 || st.Mtime != f.now.Add(-time.Hour).UnixNano() {
		t.Fatalf("stat before the write %+v", st)
	}
	if st := res.Ops[2]; st.Size != 4 || st.Mtime != f.now.UnixNano() {
		t.Fatalf("stat after the write %+v", st)
	}
}

// TestReadYourWritesRandom compares, for random requests of writes ending
// in a read, what the read returns inside the request with what it
// returns in a request of its own once the writes have applied.
func TestReadYourWritesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 1))
	key := func(n int) string { return fmt.Sprintf("k%d", rng.IntN(n)) }
	data := func() []byte { return bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, rng.IntN(7)) }
	writeOp := func() wire.ObjectOp {
		switch rng.IntN(13) {
		case 0, 1:
			return wire.ObjectOp{Code: wire.OpWrite, Offset: uint64(rng.IntN(20)), Data: data()}
		case 2:
			return wire.ObjectOp{Code: wire.OpWriteFull, Data: data()}
		case 3:
			return wire.ObjectOp{Code: wire.OpAppend, Data: data()}
		case 4:
			return wire.ObjectOp{Code: wire.OpTruncate, Offset: uint64(rng.IntN(20))}
		case 5:
			return wire.ObjectOp{Code: wire.OpZero, Offset: uint64(rng.IntN(20)), Length: uint64(rng.IntN(8))}
		case 6:
			return wire.ObjectOp{Code: wire.OpDelete}
		case 7:
			return wire.ObjectOp{Code: wire.OpCreate, Flags: uint32(rng.IntN(2)) * wire.CreateExclusive}
		case 8:
			return opSetX(key(3), string(data()))
		case 9:
			return wire.ObjectOp{Code: wire.OpRmXattr, Name: key(3)}
		case 10:
			return opOmapSet(key(6), string(data()), key(6), string(data()))
		case 11:
			if rng.IntN(4) == 0 {
				return wire.ObjectOp{Code: wire.OpOmapClear}
			}
			return wire.ObjectOp{Code: wire.OpOmapRmKeys, Keys: []string{key(6), key(6)}}
		}
		return wire.ObjectOp{Code: wire.OpOmapSetHeader, Data: data()}
	}
	readOp := func() wire.ObjectOp {
		switch rng.IntN(10) {
		case 0, 1:
			return opRead(uint64(rng.IntN(22)), uint64(rng.IntN(10)))
		case 2:
			return wire.ObjectOp{Code: wire.OpStat}
		case 3:
			return opGetX(key(3))
		case 4:
			return wire.ObjectOp{Code: wire.OpGetXattrs}
		case 5:
			return wire.ObjectOp{Code: wire.OpCmpXattr, Name: key(3), Data: data(), Flags: uint32(wire.CmpLTE)}
		case 6:
			return wire.ObjectOp{Code: wire.OpOmapGetHeader}
		case 7:
			after := []string{"", "k1", "k3"}[rng.IntN(3)]
			return wire.ObjectOp{Code: []wire.ObjectOpCode{wire.OpOmapGetKeys, wire.OpOmapGetVals}[rng.IntN(2)],
				Name: after, Prefix: []string{"", "k"}[rng.IntN(2)], Length: uint64(rng.IntN(4))}
		case 8:
			return wire.ObjectOp{Code: wire.OpOmapGetByKeys, Keys: []string{key(6), key(6), key(6)}}
		}
		op := opOmapCmp(key(6), string(data()))
		op.Flags = uint32(wire.CmpGTE)
		return op
	}
	render := func(op wire.ObjectOp, res *Result, i int) string {
		if res.Code != 0 {
			return fmt.Sprintf("errno %d", res.Code)
		}
		return fmt.Sprintf("%q mtime %d", show(op, res.Ops[i]), res.Ops[i].Mtime)
	}
	for n := range 1000 {
		var setup, writes []wire.ObjectOp
		for range rng.IntN(6) {
			setup = append(setup, writeOp())
		}
		for range 1 + rng.IntN(5) {
			writes = append(writes, writeOp())
		}
		read := readOp()
		inside, apart := newFixture(t), newFixture(t)
		inside.do(setup...)
		apart.do(setup...)
		in := inside.do(append(slices.Clone(writes), read)...)
		w := apart.do(writes...)
		if w.Code != 0 {
			if in.Code != w.Code || in.FailedOp != w.FailedOp {
				t.Fatalf("case %d: %v then %v: errno %d at %d inside, the writes alone %d at %d", n, writes, read, in.Code, in.FailedOp, w.Code, w.FailedOp)
			}
			continue
		}
		if got, want := render(read, in, len(writes)), render(read, apart.do(read), 0); got != want {
			t.Fatalf("case %d: setup %v; %v then %v: %s inside the request, %s after it", n, setup, writes, read, got, want)
		}
	}
}
