package mon

import (
	"context"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// sendQueue bounds the Raft messages waiting for one peer; beyond it
// messages are dropped (Raft retransmits) and the peer reported
// unreachable.
const sendQueue = 1024

// startSenders starts one goroutine per peer monitor that sends its Raft
// messages in order.
func (m *Monitor) startSenders(ctx context.Context) {
	for i, mi := range m.cfg.MonMap.Mons {
		id := uint64(i + 1)
		if id == m.id {
			continue
		}
		q := make(chan *pb.Message, sendQueue)
		m.sendq[id] = q
		peer := auth.EntityName{Type: "mon", ID: mi.Name}
		m.wg.Add(1)
		go m.sender(ctx, id, peer, mi.Addr, q)
	}
}

func (m *Monitor) sender(ctx context.Context, id uint64, peer auth.EntityName, addr string, q chan *pb.Message) {
	defer m.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.stop:
			return
		case msg := <-q:
			data, err := proto.Marshal(msg)
			if err == nil {
				sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				err = m.msgr.Send(sctx, peer, addr, msgr.Message{Type: wire.TypeMonRaft, Version: 1, Payload: wire.MonRaft{Data: data}.Encode()})
				cancel()
			}
			snap := msg.GetType() == pb.MsgSnap
			if err != nil || snap {
				m.report(sendResult{to: id, snap: snap, ok: err == nil})
			}
		}
	}
}

func (m *Monitor) report(r sendResult) {
	select {
	case m.sendResults <- r:
	default: // the loop is busy; Raft copes with a lost report
	}
}

// send queues Raft's messages for their peers.
func (m *Monitor) send(msgs []*pb.Message) {
	for _, msg := range msgs {
		q, ok := m.sendq[msg.GetTo()]
		if !ok {
			continue
		}
		select {
		case q <- msg:
		default:
			m.report(sendResult{to: msg.GetTo(), snap: msg.GetType() == pb.MsgSnap})
		}
	}
}
