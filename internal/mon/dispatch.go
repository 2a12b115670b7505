package mon

import (
	"context"
	"time"

	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// dispatcher receives the monitor's messages from the messenger.
type dispatcher struct{ m *Monitor }

// replyTimeout bounds how long a command may take before its reply is
// abandoned (the client will have retried elsewhere).
const replyTimeout = 30 * time.Second

func (d dispatcher) Dispatch(from msgr.Peer, msg msgr.Message) {
	m := d.m
	switch msg.Type {
	case wire.TypeMonRaft:
		if from.Name.Type != "mon" || m.peers[from.Name.ID] == nil {
			m.log.Warn("raft message from a non-monitor", "from", from.Name.String())
			return
		}
		r, err := wire.DecodeMonRaft(msg.Payload)
		var rm pb.Message
		if err == nil {
			err = proto.Unmarshal(r.Data, &rm)
		}
		if err != nil {
			m.log.Warn("bad raft message", "from", from.Name.String(), "err", err)
			return
		}
		select {
		case m.raftIn <- raftMsg{&rm}:
		case <-m.stop:
		}
	case wire.TypeMonPing:
		p, err := wire.DecodeMonPing(msg.Payload)
		if err != nil {
			m.log.Warn("bad ping", "from", from.Name.String(), "err", err)
			return
		}
		m.handlePing(from, p)
	case wire.TypeMonCommand:
		c, err := wire.DecodeMonCommand(msg.Payload)
		if err != nil {
			m.log.Warn("bad command", "from", from.Name.String(), "err", err)
			return
		}
		m.log.Debug("command", "from", from.Name.String(), "prefix", c.Cmd.Prefix, "tid", c.Tid)
		go m.serveCommand(from, c)
	case wire.TypeMonSubscribe:
		s, err := wire.DecodeMonSubscribe(msg.Payload)
		if err != nil {
			m.log.Warn("bad subscribe", "from", from.Name.String(), "err", err)
			return
		}
		m.subscribe(from, s)
	default:
		m.log.Warn("unknown message type", "from", from.Name.String(), "type", msg.Type)
	}
}

func (d dispatcher) HandleEvent(ev msgr.Event) {
	if ev.Kind == msgr.EventReset || ev.Kind == msgr.EventFailed {
		d.m.unsubscribe(ev.Session)
	}
}

// serveCommand runs a client's command and sends the reply back on the
// client's session.
func (m *Monitor) serveCommand(from msgr.Peer, c wire.MonCommand) {
	ctx, cancel := context.WithTimeout(context.Background(), replyTimeout)
	defer cancel()
	go func() {
		select {
		case <-m.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	var id commandID
	if c.Seq != 0 {
		id = commandID{Client: clientKey(from.Name.String(), c.Client), Seq: c.Seq, Oldest: c.Oldest}
	}
	reply := m.handleCommand(ctx, from, c.Cmd, id)
	_, builtin := m.builtin(c.Cmd.Prefix)
	svc, _ := m.route(c.Cmd.Prefix)
	m.metrics.command(c.Cmd.Prefix, builtin || svc != nil, reply.Code)
	out := wire.MonCommandReply{Tid: c.Tid, Reply: reply}
	if err := from.Session.Send(ctx, msgr.Message{Type: wire.TypeMonCommandReply, Version: 1, Payload: out.Encode()}); err != nil {
		m.log.Info("reply not sent", "to", from.Name.String(), "command", c.Cmd.Prefix, "err", err)
	}
}
