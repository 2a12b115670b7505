package mdsmap

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// sample builds a map with two file systems: cephfs with rank 0 active
// on a, a standby-replay b following it and rank 1 failed; fs2 with rank
// 0 in replay on c; and a standby d.
func sample() *Map {
	m := New()
	m.Epoch = 9
	m.NextFSID, m.NextGID = 3, 5
	m.FS[1] = &FS{ID: 1, Name: "cephfs", MetadataPool: 1, DataPools: []int64{2, 3}, MaxMDS: 2, StandbyWanted: 1,
		Flags: Joinable | AllowStandbyReplay, SessionTimeout: DefaultSessionTimeout, SessionAutoclose: DefaultSessionAutoclose,
		Created: 2, Modified: 8, In: []Rank{0, 1}, Up: map[Rank]GID{0: 1}}
	m.FS[2] = &FS{ID: 2, Name: "fs2", MetadataPool: 4, DataPools: []int64{5}, MaxMDS: 1, StandbyWanted: 0,
		Flags: Joinable, SessionTimeout: time.Second, SessionAutoclose: 2 * time.Second, Created: 3, Modified: 3,
		In: []Rank{0}, Up: map[Rank]GID{0: 3}}
	m.Daemons[1] = &Daemon{GID: 1, Name: "a", Addr: "10.0.0.1:6800", State: StateActive, FS: 1, Rank: 0, Since: 4}
	m.Daemons[2] = &Daemon{GID: 2, Name: "b", Addr: "10.0.0.2:6800", State: StateStandbyReplay, FS: 1, Rank: 0, Since: 5}
	m.Daemons[3] = &Daemon{GID: 3, Name: "c", Addr: "10.0.0.3:6800", State: StateReplay, FS: 2, Rank: 0, Since: 6, JoinFS: "fs2"}
	m.Daemons[4] = &Daemon{GID: 4, Name: "d", Addr: "10.0.0.4:6800", State: StateStandby, Rank: NoRank, Since: 7}
	return m
}

func TestRoundTrip(t *testing.T) {
	m := sample()
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := got.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Fatal("re-encoding differs")
	}
	if got.FS[1].Failed()[0] != 1 || got.Follower(1, 0).Name != "b" || got.Holder(2, 0).Name != "c" {
		t.Fatalf("decoded map lost ranks: %+v", got.FS[1])
	}
}

func TestSummary(t *testing.T) {
	want := "cephfs:1/2 fs2:1 {cephfs:0=a=up:active,fs2:0=c=up:replay} 1 up:standby-replay 1 up:standby 1 failed"
	if got := sample().Summary(); got != want {
		t.Fatalf("Summary:\n got %s\nwant %s", got, want)
	}
	m := New()
	if got := m.Summary(); got != "0 up:standby" {
		t.Fatalf("empty map: %q", got)
	}
}

func TestCheckRefuses(t *testing.T) {
	for name, spoil := range map[string]func(m *Map){
		"rank held by a standby":     func(m *Map) { m.Daemons[1].State = StateStandby },
		"held rank not in":           func(m *Map) { m.FS[1].In = []Rank{1} },
		"duplicate names":            func(m *Map) { m.FS[2].Name = "cephfs" },
		"holder names another rank":  func(m *Map) { m.Daemons[1].Rank = 1 },
		"standby with a rank":        func(m *Map) { m.Daemons[4].Rank = 0 },
		"follower of a missing rank": func(m *Map) { m.Daemons[2].Rank = 7 },
		"damaged and held":           func(m *Map) { m.FS[1].Damaged = []Rank{0} },
		"gid beyond next":            func(m *Map) { m.NextGID = 3 },
		"boot kept in the map":       func(m *Map) { m.Daemons[4].State = StateBoot },
		"max_mds zero":               func(m *Map) { m.FS[2].MaxMDS = 0 },
	} {
		m := sample()
		spoil(m)
		if err := m.Check(); err == nil {
			t.Errorf("%s: Check passed", name)
		}
		b, _ := m.MarshalBinary()
		if _, err := Unmarshal(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Unmarshal: %v, want ErrCorrupt", name, err)
		}
	}
}

func TestCloneIsDeep(t *testing.T) {
	m := sample()
	c := m.Clone()
	c.FS[1].Up[1] = 4
	c.FS[1].In = append(c.FS[1].In[:0], 5)
	c.Daemons[4].State = StateReplay
	if m.FS[1].Up[1] != 0 || m.FS[1].In[0] != 0 || m.Daemons[4].State != StateStandby {
		t.Fatal("Clone shares state with its original")
	}
}

func TestStates(t *testing.T) {
	for s := StateNone; s < numStates; s++ {
		got, err := ParseState(s.Up())
		if err != nil || got != s {
			t.Errorf("ParseState(%q) = %v, %v", s.Up(), got, err)
		}
	}
	if !CanAdvance(StateReplay, StateReconnect) || CanAdvance(StateReplay, StateActive) || CanAdvance(StateActive, StateReplay) {
		t.Fatal("CanAdvance: wrong order")
	}
}

func FuzzUnmarshal(f *testing.F) {
	b, _ := sample().MarshalBinary()
	f.Add(b)
	e, _ := New().MarshalBinary()
	f.Add(e)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Unmarshal(data)
		if err != nil {
			return
		}
		out, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		m2, err := Unmarshal(out)
		if err != nil {
			t.Fatalf("re-decoding a decoded map: %v", err)
		}
		out2, _ := m2.MarshalBinary()
		if !bytes.Equal(out, out2) {
			t.Fatal("encoding not stable")
		}
		_ = m.Summary()
	})
}
