package monstore

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// raftNode is one monitor in the integration test: a RawNode over a Store
// and the Ready loop a monitor driver runs.
type raftNode struct {
	t     *testing.T
	id    uint64
	fs    *vfs.MemFS
	cache int64 // Options.EntryCacheBytes
	store *Store
	rn    *raft.RawNode
}

func (n *raftNode) open(fs *vfs.MemFS) {
	n.t.Helper()
	var err error
	n.fs = fs
	if n.store, err = Open(Options{FS: fs, Dir: "mon", EntryCacheBytes: n.cache}); err != nil {
		n.t.Fatal(err)
	}
}

// raftNet is a deterministic in-test network: messages queue in order and
// are delivered when the test says so; a down node sends and receives
// nothing.
type raftNet struct {
	nodes map[uint64]*raftNode
	queue []*pb.Message
	down  map[uint64]bool
	snaps int // MsgSnap messages delivered
}

func (n *raftNode) start() {
	n.t.Helper()
	applied, err := n.store.AppliedIndex()
	if err != nil {
		n.t.Fatal(err)
	}
	n.rn, err = raft.NewRawNode(&raft.Config{
		ID:              n.id,
		ElectionTick:    10,
		HeartbeatTick:   1,
		Storage:         n.store,
		Applied:         applied,
		MaxSizePerMsg:   4 << 10,
		MaxInflightMsgs: 64,
		Logger:          discardRaftLogger{},
	})
	if err != nil {
		n.t.Fatal(err)
	}
}

// handleReady is the driver's loop body: persist, send, apply, advance.
func (n *raftNode) handleReady(net *raftNet) {
	t := n.t
	for n.rn.HasReady() {
		rd := n.rn.Ready()
		if err := n.store.Append(rd.HardState, rd.Entries, rd.Snapshot); err != nil {
			t.Fatalf("node %d: append: %v", n.id, err)
		}
		net.queue = append(net.queue, rd.Messages...)
		if len(rd.CommittedEntries) > 0 {
			b := n.store.NewBatch()
			for _, e := range rd.CommittedEntries {
				n.apply(b, e)
			}
			if err := n.store.Commit(rd.CommittedEntries[len(rd.CommittedEntries)-1].GetIndex(), b); err != nil {
				t.Fatalf("node %d: commit: %v", n.id, err)
			}
		}
		n.rn.Advance(rd)
	}
}

// apply is the state machine: every proposal "k=v" sets k in service "kv"
// and adds an epoch to service "osdmap" whose full map is the proposal,
// keeping the last 4 epochs.
func (n *raftNode) apply(b *Batch, e *pb.Entry) {
	t := n.t
	switch e.GetType() {
	case pb.EntryConfChange:
		var cc pb.ConfChange
		if err := proto.Unmarshal(e.GetData(), &cc); err != nil {
			t.Fatal(err)
		}
		b.SetConfState(n.rn.ApplyConfChange(&cc))
	case pb.EntryNormal:
		if len(e.GetData()) == 0 {
			return // a new leader's empty entry
		}
		var k, v string
		if _, err := fmt.Sscanf(string(e.GetData()), "%s %s", &k, &v); err != nil {
			t.Fatalf("bad proposal %q", e.GetData())
		}
		b.Put("kv", []byte(k), []byte(v))
		_, last, err := n.store.Epochs("osdmap")
		if err != nil {
			t.Fatal(err)
		}
		epoch := last + 1
		if r, ok := b.epochs["osdmap"]; ok {
			epoch = r.last + 1
		}
		inc := binary.BigEndian.AppendUint64(nil, e.GetIndex())
		b.PutEpoch("osdmap", epoch, inc, e.GetData())
		if epoch > 4 {
			b.Trim("osdmap", epoch-3)
		}
		if err := b.Err(); err != nil {
			t.Fatalf("node %d: apply %d: %v", n.id, e.GetIndex(), err)
		}
	}
}

// settle runs Ready loops and delivers messages until nothing moves.
func (net *raftNet) settle(t *testing.T) {
	for range 10000 {
		for id := uint64(1); id <= uint64(len(net.nodes)); id++ {
			net.nodes[id].handleReady(net)
		}
		if len(net.queue) == 0 {
			return
		}
		q := net.queue
		net.queue = nil
		for _, m := range q {
			to, from := net.nodes[m.GetTo()], net.nodes[m.GetFrom()]
			if net.down[m.GetTo()] || net.down[m.GetFrom()] {
				if m.GetType() == pb.MsgSnap {
					from.rn.ReportSnapshot(m.GetTo(), raft.SnapshotFailure)
				}
				continue
			}
			if err := to.rn.Step(m); err != nil {
				t.Fatalf("node %d: step %v: %v", to.id, m.GetType(), err)
			}
			if m.GetType() == pb.MsgSnap {
				net.snaps++
				from.rn.ReportSnapshot(m.GetTo(), raft.SnapshotFinish)
			}
		}
	}
	t.Fatal("network does not settle")
}

// tick ticks every node that is up n times, settling after each.
func (net *raftNet) tick(t *testing.T, n int) {
	for range n {
		for id := uint64(1); id <= uint64(len(net.nodes)); id++ {
			if !net.down[id] {
				net.nodes[id].rn.Tick()
			}
		}
		net.settle(t)
	}
}

func (net *raftNet) leader(t *testing.T) *raftNode {
	for _, n := range net.nodes {
		if !net.down[n.id] && n.rn.BasicStatus().RaftState == raft.StateLeader {
			return n
		}
	}
	t.Fatal("no leader")
	return nil
}

// propose proposes "k v" pairs at the leader and settles.
func (net *raftNet) propose(t *testing.T, from, to int) {
	l := net.leader(t)
	for i := from; i < to; i++ {
		if err := l.rn.Propose(fmt.Appendf(nil, "k%d v%d", i%7, i)); err != nil {
			t.Fatal(err)
		}
		net.settle(t)
	}
}

// serviceDump renders the applied index, the ConfState and the service
// key space of a node, which every node must agree on (their logs differ
// by compaction).
func serviceDump(t *testing.T, n *raftNode) string {
	t.Helper()
	applied, err := n.store.AppliedIndex()
	if err != nil {
		t.Fatal(err)
	}
	_, cs, _ := n.store.InitialState()
	out := fmt.Sprintf("applied %d voters %v\n", applied, cs.GetVoters())
	for _, svc := range []string{"kv", "osdmap"} {
		err := n.store.Scan(svc, nil, func(k, v []byte) error {
			out += fmt.Sprintf("%s %q = %q\n", svc, k, v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestRaftCluster runs three RawNodes over Stores: election, proposals,
// a crash and restart of one node from its store, log compaction, and a
// lagging node that catches up through a snapshot built by Snapshot and
// installed by Append. With a tiny entry cache, raft reads the log from
// Pebble.
func TestRaftCluster(t *testing.T) {
	for _, cache := range []int64{0, 200} {
		t.Run(fmt.Sprint("cache", cache), func(t *testing.T) { testRaftCluster(t, cache) })
	}
}

func testRaftCluster(t *testing.T, cache int64) {
	net := &raftNet{nodes: make(map[uint64]*raftNode), down: make(map[uint64]bool)}
	peers := []raft.Peer{{ID: 1}, {ID: 2}, {ID: 3}}
	for id := uint64(1); id <= 3; id++ {
		n := &raftNode{t: t, id: id, cache: cache}
		n.open(vfs.NewCrashableMem())
		n.start()
		if err := n.rn.Bootstrap(peers); err != nil {
			t.Fatal(err)
		}
		net.nodes[id] = n
	}
	defer func() {
		for _, n := range net.nodes {
			n.store.Close()
		}
	}()
	net.settle(t)
	if err := net.nodes[1].rn.Campaign(); err != nil {
		t.Fatal(err)
	}
	net.settle(t)
	if net.leader(t).id != 1 {
		t.Fatalf("leader is %d", net.leader(t).id)
	}
	net.propose(t, 0, 20)
	checkSame(t, net, 1, 2, 3)

	// Node 3 crashes (unsynced data lost) and restarts from its store.
	n3 := net.nodes[3]
	clone := n3.fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	before := serviceDump(t, n3)
	if err := n3.store.Close(); err != nil {
		t.Fatal(err)
	}
	n3.open(clone)
	if got := serviceDump(t, n3); got != before {
		t.Fatalf("node 3 after restart: %s", diffLines(got, before))
	}
	n3.start()
	net.propose(t, 20, 30)
	net.tick(t, 3)
	checkSame(t, net, 1, 2, 3)

	// Node 2 goes away; the others move on and compact their logs.
	net.down[2] = true
	net.propose(t, 30, 80)
	for _, id := range []uint64{1, 3} {
		n := net.nodes[id]
		applied, _ := n.store.AppliedIndex()
		if err := n.store.Compact(applied - 5); err != nil {
			t.Fatal(err)
		}
		if first, _ := n.store.FirstIndex(); first != applied-4 {
			t.Fatalf("node %d: first index %d after compacting through %d", id, first, applied-5)
		}
	}
	first2, _ := net.nodes[2].store.LastIndex()
	if leaderFirst, _ := net.nodes[1].store.FirstIndex(); first2+1 >= leaderFirst {
		t.Fatalf("node 2 (last %d) is not behind the leader's log start %d", first2, leaderFirst)
	}

	// Node 2 comes back: only a snapshot can bring it up to date.
	net.down[2] = false
	net.tick(t, 5)
	if net.snaps == 0 {
		t.Fatal("no snapshot was sent")
	}
	net.propose(t, 80, 90)
	net.tick(t, 3)
	checkSame(t, net, 1, 2, 3)
	n2 := net.nodes[2]
	if f, _ := n2.store.FirstIndex(); f <= 2 {
		t.Fatalf("node 2 first index %d: it did not install a snapshot", f)
	}
	if first, last, _ := n2.store.Epochs("osdmap"); last-first != 3 {
		t.Fatalf("node 2 osdmap history [%d, %d], want 4 epochs", first, last)
	}
	v, err := n2.store.Get("kv", []byte("k5"))
	if err != nil || string(v) != "v89" {
		t.Fatalf("node 2 k5 = %q, %v", v, err)
	}

	// Node 2 restarts after the snapshot and still agrees.
	if err := n2.store.Close(); err != nil {
		t.Fatal(err)
	}
	n2.open(n2.fs)
	n2.start()
	net.propose(t, 90, 95)
	net.tick(t, 3)
	checkSame(t, net, 1, 2, 3)
}

func checkSame(t *testing.T, net *raftNet, ids ...uint64) {
	t.Helper()
	want := serviceDump(t, net.nodes[ids[0]])
	for _, id := range ids[1:] {
		if got := serviceDump(t, net.nodes[id]); got != want {
			t.Fatalf("node %d differs from node %d: %s", id, ids[0], diffLines(got, want))
		}
	}
}

// discardRaftLogger is a raft.Logger that drops messages but still panics
// on Panic and Fatal, so a raft invariant failure fails the test.
type discardRaftLogger struct{}

func (discardRaftLogger) Debug(...any)            {}
func (discardRaftLogger) Debugf(string, ...any)   {}
func (discardRaftLogger) Error(...any)            {}
func (discardRaftLogger) Errorf(string, ...any)   {}
func (discardRaftLogger) Info(...any)             {}
func (discardRaftLogger) Infof(string, ...any)    {}
func (discardRaftLogger) Warning(...any)          {}
func (discardRaftLogger) Warningf(string, ...any) {}
func (discardRaftLogger) Fatal(v ...any)          { panic(fmt.Sprint(v...)) }
func (discardRaftLogger) Fatalf(f string, v ...any) {
	panic(fmt.Errorf(f, v...))
}
func (discardRaftLogger) Panic(v ...any) { panic(fmt.Sprint(v...)) }
func (discardRaftLogger) Panicf(f string, v ...any) {
	panic(fmt.Errorf(f, v...))
}

func TestRaftClusterDumpShape(t *testing.T) {
	// serviceDump must see the state machine's output, or checkSame would
	// compare nothing.
	net := &raftNet{nodes: make(map[uint64]*raftNode), down: make(map[uint64]bool)}
	n := &raftNode{t: t, id: 1, fs: vfs.NewMem()}
	n.store = testOpen(t, n.fs, "mon")
	defer n.store.Close()
	n.start()
	if err := n.rn.Bootstrap([]raft.Peer{{ID: 1}}); err != nil {
		t.Fatal(err)
	}
	net.nodes[1] = n
	net.settle(t)
	if err := n.rn.Campaign(); err != nil {
		t.Fatal(err)
	}
	net.settle(t)
	net.propose(t, 0, 6)
	got := serviceDump(t, n)
	want := `applied 8 voters [1]
kv "k0" = "v0"
kv "k1" = "v1"
kv "k2" = "v2"
kv "k3" = "v3"
kv "k4" = "v4"
kv "k5" = "v5"
osdmap "first_committed" = "\x01\x01\x01\x00\x00\x00\x03"
osdmap "full/00000000000000000003" = "k2 v2"
osdmap "full/00000000000000000004" = "k3 v3"
osdmap "full/00000000000000000005" = "k4 v4"
osdmap "full/00000000000000000006" = "k5 v5"
osdmap "inc/00000000000000000003" = "\x00\x00\x00\x00\x00\x00\x00\x05"
osdmap "inc/00000000000000000004" = "\x00\x00\x00\x00\x00\x00\x00\x06"
osdmap "inc/00000000000000000005" = "\x00\x00\x00\x00\x00\x00\x00\a"
osdmap "inc/00000000000000000006" = "\x00\x00\x00\x00\x00\x00\x00\b"
osdmap "last_committed" = "\x01\x01\x01\x00\x00\x00\x06"
`
	if got != want {
		t.Fatalf("dump:\n%s\nwant:\n%s", got, want)
	}
}
