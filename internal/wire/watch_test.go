package wire

import (
	"reflect"
	"testing"
)

func TestWatchNotifyRoundTrip(t *testing.T) {
	for _, m := range []WatchNotify{
		{Kind: WatchEventNotify, Object: "hdr", Cookie: 7, NotifyID: 1 << 40, Notifier: "client.a", Payload: []byte("hi")},
		{Kind: WatchEventError, Object: "hdr", Cookie: 9, Errno: ENOTCONN},
	} {
		got, err := DecodeWatchNotify(m.Encode())
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip of %+v: %+v, %v", m, got, err)
		}
	}
	if _, err := DecodeWatchNotify(WatchNotify{Kind: 9}.Encode()); err == nil {
		t.Fatal("an unknown kind decoded")
	}
	b := WatchNotify{Kind: WatchEventNotify, Payload: []byte("x")}.Encode()
	if _, err := DecodeWatchNotify(b[:len(b)-2]); err == nil {
		t.Fatal("a truncated watch notify decoded")
	}
}

func TestWatchersAndNotifyResultRoundTrip(t *testing.T) {
	ws := []WatchInfo{{WatcherID: WatcherID{"client.a", 1}, TimeoutSec: 30},
		{WatcherID: WatcherID{"client.b", 2}}}
	got, err := DecodeWatchers(EncodeWatchers(ws))
	if err != nil || !reflect.DeepEqual(got, ws) {
		t.Fatalf("watchers: %+v, %v", got, err)
	}
	if w, err := DecodeWatchInfo(ws[0].Encode()); err != nil || w != ws[0] {
		t.Fatalf("watch info: %+v, %v", w, err)
	}
	r := NotifyResult{Acks: []NotifyAck{{WatcherID: WatcherID{"client.a", 1}, Payload: []byte("ok")}, {WatcherID: WatcherID{"client.c", 3}}},
		TimedOut: []WatcherID{{"client.b", 2}}}
	gr, err := DecodeNotifyResult(r.Encode())
	if err != nil || !reflect.DeepEqual(gr, r) {
		t.Fatalf("notify result: %+v, %v", gr, err)
	}
	if (WatcherID{"a", 2}).Compare(WatcherID{"a", 10}) >= 0 || (WatcherID{"b", 1}).Compare(WatcherID{"a", 9}) <= 0 {
		t.Fatal("watcher order")
	}
}

func FuzzWatchNotify(f *testing.F) {
	f.Add(WatchNotify{Kind: WatchEventNotify, Cookie: 3, Payload: []byte("p")}.Encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeWatchNotify(b)
		if err != nil {
			return
		}
		if again, err := DecodeWatchNotify(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("re-encoding %+v: %+v, %v", m, again, err)
		}
	})
}

func FuzzWatchers(f *testing.F) {
	f.Add(EncodeWatchers([]WatchInfo{{WatcherID: WatcherID{"client.a", 1}, TimeoutSec: 30}}))
	f.Add(WatchInfo{}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		if w, err := DecodeWatchInfo(b); err == nil {
			if again, err := DecodeWatchInfo(w.Encode()); err != nil || again != w {
				t.Fatalf("re-encoding %+v: %+v, %v", w, again, err)
			}
		}
		ws, err := DecodeWatchers(b)
		if err != nil {
			return
		}
		if again, err := DecodeWatchers(EncodeWatchers(ws)); err != nil || !reflect.DeepEqual(again, ws) {
			t.Fatalf("re-encoding %+v: %+v, %v", ws, again, err)
		}
	})
}

func FuzzNotifyResult(f *testing.F) {
	f.Add(NotifyResult{Acks: []NotifyAck{{WatcherID: WatcherID{"c", 1}, Payload: []byte("x")}}, TimedOut: []WatcherID{{"d", 2}}}.Encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeNotifyResult(b)
		if err != nil {
			return
		}
		if again, err := DecodeNotifyResult(r.Encode()); err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("re-encoding %+v: %+v, %v", r, again, err)
		}
	})
}
