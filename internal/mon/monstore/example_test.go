package monstore_test

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Example shows the Ready loop of a monitor driver over a Store: persist
// with Append before sending, apply committed entries into a Batch and
// Commit it with the applied index, then Advance. A restart passes
// AppliedIndex as Config.Applied.
func Example() {
	store, err := monstore.Open(monstore.Options{FS: vfs.NewMem(), Dir: "mon.a"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	applied, _ := store.AppliedIndex()
	rn, err := raft.NewRawNode(&raft.Config{
		ID: 1, ElectionTick: 10, HeartbeatTick: 1,
		Storage: store, Applied: applied,
		MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = rn.Bootstrap([]raft.Peer{{ID: 1}}) // a new single-monitor cluster

	ready := func() error {
		for rn.HasReady() {
			rd := rn.Ready()
			// 1. Persist (synced) before any message leaves.
			if err := store.Append(rd.HardState, rd.Entries, rd.Snapshot); err != nil {
				return err
			}
			// 2. Send rd.Messages here (none: one node).
			// 3. Apply committed entries, atomically with the applied index.
			if n := len(rd.CommittedEntries); n > 0 {
				b := store.NewBatch()
				for _, e := range rd.CommittedEntries {
					switch e.GetType() {
					case pb.EntryConfChange:
						var cc pb.ConfChange
						if err := proto.Unmarshal(e.GetData(), &cc); err != nil {
							return err
						}
						b.SetConfState(rn.ApplyConfChange(&cc))
					case pb.EntryNormal:
						if len(e.GetData()) > 0 {
							_, last, _ := store.Epochs("osdmap")
							b.PutEpoch("osdmap", last+1, e.GetData(), nil)
						}
					}
				}
				if err := store.Commit(rd.CommittedEntries[n-1].GetIndex(), b); err != nil {
					return err
				}
			}
			rn.Advance(rd)
		}
		return nil
	}
	if err := ready(); err != nil {
		fmt.Println(err)
		return
	}
	_ = rn.Campaign()
	_ = ready()
	_ = rn.Propose([]byte("osd.0 up"))
	if err := ready(); err != nil {
		fmt.Println(err)
		return
	}
	_, last, _ := store.Epochs("osdmap")
	inc, _ := store.Inc("osdmap", last)
	applied, _ = store.AppliedIndex()
	fmt.Printf("applied %d, osdmap epoch %d: %s\n", applied, last, inc)
	// Output: applied 3, osdmap epoch 1: osd.0 up
}
