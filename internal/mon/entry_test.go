package mon

import (
	"reflect"
	"testing"

	"github.com/cuttlestore/cuttle/encoding"
)

func TestEntryRoundTrip(t *testing.T) {
	e := entry{Service: "osdmap", Proposal: []byte("p"), Origin: 2, Request: 9, Time: -3,
		Command: commandID{Client: clientKey("client.admin", 5), Seq: 7, Oldest: 6}}
	got, err := decodeEntry(e.encode())
	if err != nil || !reflect.DeepEqual(got, e) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

// Entries written before commands were numbered (version 1) still apply.
func TestEntryVersion1(t *testing.T) {
	var enc encoding.Encoder
	m := enc.Begin(1, 1)
	enc.String("config")
	enc.Bytes([]byte("p"))
	enc.Uvarint(1)
	enc.Uvarint(4)
	enc.Uint64(10)
	enc.End(m)
	got, err := decodeEntry(enc.Data())
	want := entry{Service: "config", Proposal: []byte("p"), Origin: 1, Request: 4, Time: 10}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(entry{Service: "osdmap", Proposal: []byte("p"), Origin: 1, Time: 5}.encode())
	f.Add(entry{Service: "kv", Command: commandID{Client: "client.x/01", Seq: 3, Oldest: 1}}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b)
		if err != nil {
			return
		}
		again, err := decodeEntry(e.encode())
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("re-encoding changed %+v into %+v (%v)", e, again, err)
		}
	})
}
