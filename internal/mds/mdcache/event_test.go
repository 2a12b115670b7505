package mdcache

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/striper/layout"
)

func sampleEvent() *Event {
	l := layout.Default(3)
	file := &mdtypes.Inode{Ino: 0x10000000001, Version: 3, Mode: mdtypes.ModeRegular | 0o644, Nlink: 1, Size: 10,
		Layout: &l, Xattrs: map[string][]byte{"user.a": []byte("b")}, Mtime: mdtypes.Time{Sec: 1 << 33, Nsec: 5}}
	root := &mdtypes.Inode{Ino: mdtypes.RootIno, Version: 9, Mode: mdtypes.ModeDir | 0o755, Nlink: 3, Layout: &l}
	return &Event{Client: 4100, Tid: 77, OldestTid: 70, Op: wire.MetaCreate, Result: 0, CreatedIno: file.Ino,
		Frags: []FragDelta{
			{Dir: 1, Frag: 0, Header: mdtypes.FragHeader{Version: 12, Files: 1}, Set: []*mdtypes.Dentry{
				{Name: "f", Version: 12, Inode: file},
				{Name: "h", Version: 12, RemoteIno: file.Ino, RemoteType: mdtypes.DType(file.Mode)}},
				Remove: []string{"old"}},
			{Dir: 0x10000000002, Frag: 0, Header: mdtypes.FragHeader{Version: 1}, New: true},
			{Dir: 0x10000000003, Frag: 0, Header: mdtypes.FragHeader{Version: 4}, Removed: true},
		},
		Bases:      []*mdtypes.Inode{root},
		InoAlloc:   []mdtypes.Range{{Start: 0x10000000000, Len: 1024}},
		InoFree:    []mdtypes.Range{{Start: 0x10000000003, Len: 1}},
		Truncs:     []Trunc{{Ino: file.Ino, From: 1 << 30, To: 10, Layout: l}},
		TruncsDone: []TruncDone{{Ino: 0x10000000004, Pos: 4096}},
	}
}

// An event decodes to what was encoded, and encodes again to the same
// bytes.
func TestEventRoundTrip(t *testing.T) {
	e := sampleEvent()
	b := e.Marshal()
	got, err := UnmarshalEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, e)
	}
	if !bytes.Equal(got.Marshal(), b) {
		t.Fatal("re-encoding differs")
	}
	// Every truncation fails cleanly.
	for i := range len(b) {
		if _, err := UnmarshalEvent(b[:i]); err == nil {
			t.Fatalf("a prefix of %d of %d bytes decoded", i, len(b))
		}
	}
}

// The decoder refuses what the engine never writes: a name set and
// removed in one fragment, an invalid name, a positive result, an
// empty inode range, a non-base inode among the bases.
func TestEventRejects(t *testing.T) {
	for name, mut := range map[string]func(e *Event){
		"set and removed": func(e *Event) { e.Frags[0].Remove = append(e.Frags[0].Remove, "f") },
		"bad name":        func(e *Event) { e.Frags[0].Remove = []string{"a/b"} },
		"result":          func(e *Event) { e.Result = 3 },
		"empty range":     func(e *Event) { e.InoFree = []mdtypes.Range{{Start: 5}} },
		"not a base":      func(e *Event) { e.Bases[0].Ino = 0x10000000009 },
		"bad frag":        func(e *Event) { e.Frags[0].Frag = mdtypes.Frag(0x01000001) },
		"trunc upwards":   func(e *Event) { e.Truncs[0].To = e.Truncs[0].From },
		"trunc layout":    func(e *Event) { e.Truncs[0].Layout.StripeUnit = 0 },
	} {
		e := sampleEvent()
		mut(e)
		if _, err := UnmarshalEvent(e.Marshal()); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func FuzzEvent(f *testing.F) {
	f.Add(sampleEvent().Marshal())
	f.Add((&Event{}).Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := UnmarshalEvent(b)
		if err != nil {
			return
		}
		again, err := UnmarshalEvent(e.Marshal())
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("a decoded event does not round-trip: %v", err)
		}
	})
}

func FuzzCompleted(f *testing.F) {
	f.Add(marshalCompleted(map[ClientID]*clientReqs{7: {done: map[uint64]completion{3: {0, 0x10000000001}, 4: {-17, 0}}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := unmarshalCompleted(b)
		if err != nil {
			return
		}
		again, err := unmarshalCompleted(marshalCompleted(m))
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("completed requests do not round-trip: %v", err)
		}
	})
}
