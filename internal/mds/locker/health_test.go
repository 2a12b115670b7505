package locker

import (
	"reflect"
	"testing"
	"time"
)

// LateAfter is half the eviction timeout, or the warning timeout
// without eviction.
func TestLateAfter(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want time.Duration
	}{
		{Config{}, 60 * time.Second},
		{Config{RevokeWarn: 10 * time.Second}, 10 * time.Second},
		{Config{RevokeEvict: 60 * time.Second}, 30 * time.Second},
		{Config{RevokeWarn: 5 * time.Second, RevokeEvict: 300 * time.Second}, 150 * time.Second},
	} {
		if got := tc.cfg.LateAfter(); got != tc.want {
			t.Errorf("%+v: got %v, want %v", tc.cfg, got, tc.want)
		}
	}
}

// A client that leaves a revocation unacked is named once it is
// LateAfter old, for its oldest revocation, until it acks it or its
// session ends; the list is oldest first.
func TestLateReleases(t *testing.T) {
	const ino2 Ino = 0x200
	fsc, err := ParseCaps("Fsc")
	if err != nil {
		t.Fatal(err)
	}
	l := New(0, Config{RevokeEvict: 60 * time.Second})
	late := func(now int, want ...LateRelease) {
		t.Helper()
		if got := l.LateReleases(at(now)); !reflect.DeepEqual(got, append([]LateRelease{}, want...)) {
			t.Fatalf("at %d: got %+v, want %+v", now, got, want)
		}
	}
	l.Open(1, c1, ino, OpenRead, at(0))
	l.Open(2, c1, ino2, OpenRead, at(0))
	l.Open(3, c3, ino2, OpenRead, at(0))
	late(1)
	l.Open(4, c2, ino, OpenWrite, at(10)) // revokes c1's Fsc on ino
	late(39)
	c1ino := LateRelease{Client: c1, Ino: ino, Revoking: fsc, Since: at(10)}
	late(40, c1ino)
	l.Open(5, c2, ino2, OpenWrite, at(25)) // revokes c1's and c3's Fsc on ino2
	late(54, c1ino)
	late(55, c1ino, LateRelease{Client: c3, Ino: ino2, Revoking: fsc, Since: at(25)})
	cp := mustCap(t, l, ino, c1)
	l.Ack(c1, ino, cp.ID, cp.Seq, nil, at(56))
	late(56, LateRelease{Client: c1, Ino: ino2, Revoking: fsc, Since: at(25)}, LateRelease{Client: c3, Ino: ino2, Revoking: fsc, Since: at(25)})
	l.SessionEnd(c1, EndTimeout, at(57))
	late(57, LateRelease{Client: c3, Ino: ino2, Revoking: fsc, Since: at(25)})
	cp = mustCap(t, l, ino2, c3)
	l.Ack(c3, ino2, cp.ID, cp.Seq, nil, at(58))
	late(58)
}

func mustCap(t *testing.T, l *Locker, ino Ino, c ClientID) Capability {
	t.Helper()
	cp, ok := l.Cap(ino, c)
	if !ok {
		t.Fatalf("client.%d has no cap on %#x", c, ino)
	}
	return cp
}
