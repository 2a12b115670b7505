package sim

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/objid"

	"github.com/cuttlestore/cuttle/internal/osd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// setAck sets pool rbd's ack mode and waits until every OSD has the map.
func setAck(t *testing.T, c *Cluster, mode string) {
	t.Helper()
	c.Run("osd pool set", "pool", "rbd", "var", "ack", "val", mode, "yes_i_really_mean_it", "true")
	c.WaitForEpoch(c.Epoch())
}

// pgStatus returns PG pg as OSD id reports it.
func pgStatus(t *testing.T, c *Cluster, id int32, pg osdmap.PG) osd.PGStatus {
	t.Helper()
	for _, s := range c.OSDs[id].D.PGs() {
		if s.PG == pg.String() {
			return s
		}
	}
	t.Fatalf("osd.%d does not hold pg %s", id, pg)
	return osd.PGStatus{}
}

// In ack primary a write completes once the primary committed it, while
// the replicas still hold their commits; the primary shows them behind
// by that write until they commit, and reads see it at once. In ack all
// the same write waits for them.
func TestAckPrimaryAnswersOnThePrimarysCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDs(t)
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		_, pg, mp := place(t, c, "lagging")
		replicas := mp.Acting[1:]

		hold := func() {
			for _, r := range replicas {
				c.OSDs[r].Gate.Hold()
			}
		}
		release := func() {
			for _, r := range replicas {
				c.OSDs[r].Gate.Open()
			}
		}
		// ack all: the write waits for the replicas' commits.
		hold()
		comp := io.WriteFullAsync(ctx, "lagging", []byte("first"))
		synctest.Wait()
		select {
		case <-comp.Committed():
			t.Fatal("ack all: committed while the replicas hold their commits")
		default:
		}
		if lag := pgStatus(t, c, mp.ActingPrimary, pg).ReplicaLag; lag != nil {
			t.Fatalf("ack all shows a replication lag: %+v", lag)
		}
		release()
		if err := comp.Wait(ctx); err != nil {
			t.Fatal(err)
		}

		setAck(t, c, "primary")
		synctest.Wait()
		hold()
		data := bytes.Repeat([]byte("x"), 4096)
		if err := io.WriteFull(ctx, "lagging", data); err != nil {
			t.Fatal(err)
		}
		st := pgStatus(t, c, mp.ActingPrimary, pg)
		if st.Ack != "primary" || len(st.ReplicaLag) != 2 {
			t.Fatalf("pg %s: ack %q, lag %+v; want primary and two replicas", pg, st.Ack, st.ReplicaLag)
		}
		for _, l := range st.ReplicaLag {
			if l.Writes != 1 || l.Bytes != 4096 {
				t.Fatalf("replica lag %+v, want 1 write of 4096 bytes", l)
			}
		}
		if got := c.Gauge(mp.ActingPrimary, "cuttle_osd_pg_replication_lag_writes"); got != 2 {
			t.Fatalf("cuttle_osd_pg_replication_lag_writes sums to %v, want 2 (one write behind on each replica)", got)
		}
		got, err := io.Read(ctx, "lagging", 0, 0)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %q (%v) on the primary before the replicas committed", got, err)
		}
		release()
		synctest.Wait()
		st = pgStatus(t, c, mp.ActingPrimary, pg)
		for _, l := range st.ReplicaLag {
			if l.Writes != 0 || l.Bytes != 0 || l.Acked != st.LastUpdate {
				t.Fatalf("after the replicas committed: lag %+v, want none and acked %s", l, st.LastUpdate)
			}
		}
	})
}

// lossWindowRun is what one run of the loss-window scenario saw.
type lossWindowRun struct {
	acked      int               // writes acknowledged before the primary died
	lost       []string          // acknowledged writes not readable after recovery
	window     []string          // acknowledged writes newer than every replica's last_update
	downWhile  osd.PGStatus      // the PG while the primary was down, on its new primary
	versions   map[string]string // each acknowledged write's version
	replicaLog string            // the newest last_update of the replicas when the primary died
	primary    int32             // the primary that died
	// downPrimary is the PG's primary while the old one is down, and
	// after its state once the old one is declared lost.
	downPrimary int32
	after       osd.PGStatus
}

// lossWindow runs the scenario of docs/OSD.md, "Acknowledging on the
// primary": in pool rbd (mode ack), 6 writes replicate to every member,
// then the primary is cut off from its replicas and 6 more writes are
// sent; the primary is killed right after answering what it answered
// (marked down), the network heals, and the primary comes back with its
// disk (fate diskSurvives) or with an empty one in its place
// (diskReplaced), or never comes back and is declared lost (osdLost).
// Every write is to a new object of one PG, so a lost write is an object
// that does not exist after the PG recovers.
func lossWindow(t *testing.T, mode string, fate primaryFate) lossWindowRun {
	c, _ := threeOSDs(t)
	c.Run("osd set", "key", "noout")
	setAck(t, c, mode)
	synctest.Wait()
	epoch := c.Epoch()
	_, pg, mp := place(t, c, "lw-anchor")
	var names []string
	for i := 0; len(names) < 12; i++ {
		name := fmt.Sprintf("lw-%d", i)
		if _, p, _ := place(t, c, name); p == pg {
			names = append(names, name)
		}
	}
	primary := c.OSDs[mp.ActingPrimary]
	replicas := mp.Acting[1:]
	rc := c.NewRawClient("client.lw")
	send := func(name string) <-chan wire.OSDOpReply {
		_, ch := rc.Send(primary, Op{Epoch: epoch, Object: objid.Object(1, "", name), PG: pg,
			Ops: []wire.ObjectOp{{Code: wire.OpWriteFull, Data: []byte("data of " + name)}}})
		return ch
	}
	run := lossWindowRun{versions: map[string]string{}, primary: primary.ID}
	var acked []string
	for _, name := range names[:6] {
		r := rc.WaitCommitted(send(name))
		if r.Result != 0 {
			t.Fatalf("write %s: result %d", name, r.Result)
		}
		acked = append(acked, name)
		run.versions[name] = r.Version.String()
	}
	synctest.Wait() // the replicas commit them too
	for _, r := range replicas {
		c.Net.Partition(primary.Addr, c.OSDs[r].Addr)
	}
	chans := map[string]<-chan wire.OSDOpReply{}
	for _, name := range names[6:] {
		chans[name] = send(name)
	}
	synctest.Wait() // whatever the primary answers without its replicas, it has answered now
	for _, name := range names[6:] {
		select {
		case r := <-chans[name]:
			if r.Flags&wire.ReplyCommitted != 0 && r.Result == 0 {
				acked = append(acked, name)
				run.versions[name] = r.Version.String()
			}
		default:
		}
	}
	run.acked = len(acked)
	c.StopOSD(primary.ID)
	c.Net.Heal()
	c.WaitForEpoch(c.Epoch())
	time.Sleep(10 * time.Second) // the PG peers without the primary
	synctest.Wait()
	var newest wire.Version
	for _, r := range replicas {
		st := pgStatus(t, c, r, pg)
		var v wire.Version
		if _, err := fmt.Sscanf(st.LastUpdate, "%d'%d", &v.Epoch, &v.Counter); err != nil {
			t.Fatalf("osd.%d: last_update %q: %v", r, st.LastUpdate, err)
		}
		if newest.Less(v) {
			newest = v
		}
		if st.Role == "primary" {
			run.downWhile, run.downPrimary = st, r
		}
	}
	run.replicaLog = newest.String()
	for _, name := range acked {
		var v wire.Version
		fmt.Sscanf(run.versions[name], "%d'%d", &v.Epoch, &v.Counter)
		if newest.Less(v) {
			run.window = append(run.window, name)
		}
	}
	if fate == osdLost {
		// The operator gives up on it: the PG goes on with its replicas.
		id := strconv.Itoa(int(primary.ID))
		if r, err := c.Mon.Run(context.Background(), wire.NewCommand("osd lost", "id", id)); err != nil || r.Code != wire.EPERM {
			t.Fatalf("osd lost without --yes-i-really-mean-it: %+v, %v", r, err)
		}
		c.Run("osd lost", "id", id, "yes_i_really_mean_it", "true")
		c.WaitForEpoch(c.Epoch())
		time.Sleep(10 * time.Second)
		synctest.Wait()
		run.after = pgStatus(t, c, run.downPrimary, pg)
		readAcked(t, c, acked, &run)
		return run
	}
	if fate == diskReplaced {
		// The disk is destroyed: a new one in its place, under the same id.
		s := &GatedStore{Store: c.newStore(primary.ID)}
		if err := osd.Mkfs(context.Background(), s, primary.ID); err != nil {
			t.Fatal(err)
		}
		primary.Store.Close()
		primary.Store, primary.Gate = s, s
	}
	c.StartOSD(primary.ID)
	c.settle(t, "after the primary returned")
	// The replicas got what they missed from the authoritative log: every
	// member's log ends where the primary's does.
	head := pgStatus(t, c, primary.ID, pg).LastUpdate
	for _, r := range replicas {
		if lu := pgStatus(t, c, r, pg).LastUpdate; lu != head {
			t.Errorf("osd.%d: last_update %s after recovery, the primary's %s", r, lu, head)
		}
	}
	readAcked(t, c, acked, &run)
	return run
}

// primaryFate is what becomes of the primary that died in lossWindow.
type primaryFate int

const (
	diskSurvives primaryFate = iota // it comes back with its disk
	diskReplaced                    // it comes back with an empty store
	osdLost                         // it never comes back: `osd lost`
)

func (f primaryFate) String() string {
	return [...]string{"its disk survives", "its disk is replaced", "it is declared lost"}[f]
}

// readAcked reads every acknowledged write back, recording in run.lost
// those gone (within a minute: a PG that stays down loses them all).
func readAcked(t *testing.T, c *Cluster, acked []string, run *lossWindowRun) {
	t.Helper()
	io, err := c.connect(t, "client.reader").OpenIOContext("rbd")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range acked {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		got, err := io.Read(ctx, name, 0, 0)
		cancel()
		if err != nil || string(got) != "data of "+name {
			run.lost = append(run.lost, name)
		}
	}
}

// The loss window, shown: in ack primary the writes the primary answered
// while cut off from its replicas survive its crash as long as its disk
// does (the PG waits for it, down and naming it, meanwhile), and are
// lost with its disk: exactly those newer than every replica's log; an
// operator who declares it lost (`osd lost`) has the PG go on with its
// replicas, losing that window too. In ack all nothing answered is lost
// either way.
func TestAckPrimaryLossWindow(t *testing.T) {
	for _, tc := range []struct {
		mode string
		fate primaryFate
	}{{"primary", diskSurvives}, {"primary", diskReplaced}, {"primary", osdLost}, {"all", diskSurvives}, {"all", diskReplaced}} {
		t.Run(fmt.Sprintf("ack %s, %v", tc.mode, tc.fate), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				run := lossWindow(t, tc.mode, tc.fate)
				t.Logf("acknowledged %d, lost %d %v, window %d %v (replicas' newest last_update %s)",
					run.acked, len(run.lost), run.lost, len(run.window), run.window, run.replicaLog)
				if tc.mode == "all" {
					if run.acked != 6 || len(run.lost) != 0 || len(run.window) != 0 {
						t.Fatalf("ack all: %d acknowledged (want 6: none while cut off), lost %v, window %v", run.acked, run.lost, run.window)
					}
					return
				}
				if run.acked != 12 || len(run.window) != 6 {
					t.Fatalf("ack primary: %d acknowledged, %d in the window; want 12 and the 6 answered while cut off", run.acked, len(run.window))
				}
				if run.downWhile.State != "down" || !slices.Equal(run.downWhile.BlockedBy, []int32{run.primary}) {
					t.Errorf("while the primary was down the PG was %q blocked by %v on its new primary, want down blocked by osd.%d (%+v)",
						run.downWhile.State, run.downWhile.BlockedBy, run.primary, run.downWhile)
				}
				if tc.fate == diskSurvives && len(run.lost) != 0 {
					t.Errorf("the primary's disk survived, yet %v were lost", run.lost)
				}
				if tc.fate != diskSurvives && !slices.Equal(run.lost, run.window) {
					t.Errorf("lost %v when %v, want exactly the window %v", run.lost, tc.fate, run.window)
				}
				if tc.fate == osdLost && !strings.HasPrefix(run.after.State, "active") {
					t.Errorf("after osd lost the PG is %q (%s), want active", run.after.State, run.after.DownReason)
				}
			})
		})
	}
}

// A PG answers at most half its log's writes ahead of its replicas;
// the next write waits for every member, as in ack all, until they
// catch up.
func TestAckPrimaryLagIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := threeOSDsWith(t, Options{LogEntries: 8}) // 4 writes may lag
		setAck(t, c, "primary")
		synctest.Wait()
		io, err := c.connect(t, "client.app").OpenIOContext("rbd")
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		_, pg, mp := place(t, c, "bounded")
		for _, r := range mp.Acting[1:] {
			c.OSDs[r].Gate.Hold()
		}
		for i := range 4 {
			if err := io.WriteFull(ctx, "bounded", []byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		comp := io.WriteFullAsync(ctx, "bounded", []byte("fifth"))
		synctest.Wait()
		select {
		case <-comp.Committed():
			t.Fatal("a fifth write was answered ahead of the replicas with 4 lagging and a log of 8")
		default:
		}
		if lag := pgStatus(t, c, mp.ActingPrimary, pg).ReplicaLag; len(lag) != 2 || lag[0].Writes != 4 {
			t.Fatalf("lag %+v, want 4 writes behind on each replica", lag)
		}
		for _, r := range mp.Acting[1:] {
			c.OSDs[r].Gate.Open()
		}
		if err := comp.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
