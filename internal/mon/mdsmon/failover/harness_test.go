package failover

import (
	"fmt"
	"testing"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// cluster drives the decisions in virtual time: daemons beacon every
// second, each finishing one phase of its rank's recovery per beacon
// (as a fast MDS would), and the leader ticks every second.
type cluster struct {
	t       *testing.T
	m       *mdsmap.Map
	live    *Liveness
	now     time.Time
	grace   time.Duration
	daemons map[string]*daemon
	order   []string
	events  []string
	fenced  []string
}

type daemon struct {
	name    string
	nonce   uint64
	state   mdsmap.State
	seq     uint64
	alive   bool
	joinFS  string
	restart int
}

func newCluster(t *testing.T, fs ...*mdsmap.FS) *cluster {
	m := mdsmap.New()
	for _, f := range fs {
		f.ID = m.NextFSID
		m.NextFSID++
		m.FS[f.ID] = f
	}
	c := &cluster{t: t, m: m, live: NewLiveness(), now: time.Unix(1000, 0), grace: 4 * time.Second,
		daemons: map[string]*daemon{}}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	return c
}

func newFS(name string, maxMDS int, flags mdsmap.Flags) *mdsmap.FS {
	return &mdsmap.FS{Name: name, MetadataPool: 1, DataPools: []int64{2}, MaxMDS: maxMDS, StandbyWanted: 1,
		Flags: mdsmap.Joinable | flags, SessionTimeout: mdsmap.DefaultSessionTimeout,
		SessionAutoclose: mdsmap.DefaultSessionAutoclose, Up: map[mdsmap.Rank]mdsmap.GID{}}
}

func (c *cluster) start(name string) {
	d := c.daemons[name]
	if d == nil {
		d = &daemon{name: name}
		c.daemons[name] = d
		c.order = append(c.order, name)
	}
	d.restart++
	d.nonce = uint64(len(name))<<32 | uint64(d.restart)
	d.state, d.alive = mdsmap.StateBoot, true
}

func (c *cluster) apply(ch *Change) {
	c.t.Helper()
	if !ch.Changed() {
		return
	}
	if err := ch.Map.Check(); err != nil {
		c.t.Fatalf("%s: map invalid after %q: %v", c.now.Format("05"), ch, err)
	}
	if ch.Map.Epoch != c.m.Epoch+1 {
		c.t.Fatalf("epoch %d after %d", ch.Map.Epoch, c.m.Epoch)
	}
	c.m = ch.Map
	for _, e := range ch.Events {
		c.events = append(c.events, fmt.Sprintf("t+%v %s", c.now.Sub(time.Unix(1000, 0)), e))
	}
	c.fenced = append(c.fenced, ch.Fence...)
}

// beacon sends d's beacon and takes the reply as an MDS would: it
// adopts the state the map gives it; one the map dropped restarts.
func (c *cluster) beacon(d *daemon) {
	d.seq++
	b := wire.MDSBeacon{Name: d.name, Addr: "addr-" + d.name, Nonce: d.nonce, Seq: d.seq, State: progress(d.state),
		WantFS: d.joinFS, WantRank: mdsmap.NoRank}
	ch := Beacon(c.m, b)
	c.apply(ch)
	r := Reply(c.m, b)
	if r.Seq != d.seq {
		c.t.Fatalf("reply seq %d, want %d", r.Seq, d.seq)
	}
	if r.State == mdsmap.StateNone {
		c.start(d.name)
		return
	}
	c.live.Heard(r.GID, c.now)
	d.state = r.State
}

// progress is the state a daemon reports after a second in s.
func progress(s mdsmap.State) mdsmap.State {
	switch s {
	case mdsmap.StateCreating, mdsmap.StateRejoin:
		return mdsmap.StateActive
	case mdsmap.StateReplay:
		return mdsmap.StateReconnect
	case mdsmap.StateReconnect:
		return mdsmap.StateRejoin
	case mdsmap.StateStopping:
		return mdsmap.StateStopped
	}
	return s
}

// run advances n seconds: every live daemon beacons, then the leader
// ticks.
func (c *cluster) run(n int) {
	for range n {
		c.now = c.now.Add(time.Second)
		for _, name := range c.order {
			if d := c.daemons[name]; d.alive {
				c.beacon(d)
			}
		}
		c.apply(Tick(c.m, c.live, c.now, c.grace))
	}
}

// until advances a second at a time until cond holds, at most limit
// seconds, and returns the seconds it took.
func (c *cluster) until(limit int, what string, cond func() bool) int {
	c.t.Helper()
	for i := 0; i <= limit; i++ {
		if cond() {
			return i
		}
		c.run(1)
	}
	c.t.Fatalf("after %d s: %s did not happen; map: %s\nevents:\n%v", limit, what, c.m.Summary(), c.events)
	return 0
}

func (c *cluster) holder(fs mdsmap.FSID, r mdsmap.Rank) string {
	if d := c.m.Holder(fs, r); d != nil {
		return d.Name + "=" + d.State.String()
	}
	return "-"
}

func beaconOf(d *daemon, s mdsmap.State) wire.MDSBeacon {
	d.seq++
	return wire.MDSBeacon{Name: d.name, Addr: "addr-" + d.name, Nonce: d.nonce, Seq: d.seq, State: s, WantRank: mdsmap.NoRank}
}
