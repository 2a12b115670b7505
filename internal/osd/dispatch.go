package osd

import (
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/osd/txncrc"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// dispatcher routes messages from the messenger. It never blocks: every
// handler queues or answers.
type dispatcher struct{ o *OSD }

func (d dispatcher) Dispatch(from msgr.Peer, msg msgr.Message) {
	o := d.o
	o.msgsIn.Add(1)
	o.trafficLen.Add(uint64(len(msg.Payload)))
	if from.Name.Type == "osd" {
		o.hb.heard(from.Name.ID, o.cfg.Clock.Now())
	}
	switch msg.Type {
	case wire.TypeOSDPing:
		m, err := wire.DecodeOSDPing(msg.Payload)
		if err != nil {
			o.log.Warn("bad ping", "from", from.Name.String(), "err", err)
			return
		}
		if from.Name.Type == "osd" {
			o.handlePing(from, m)
		}
	case wire.TypeOSDOp:
		op, err := wire.DecodeOSDOp(msg.Payload)
		if err != nil {
			o.log.Warn("bad client op", "from", from.Name.String(), "err", err)
			return
		}
		o.handleOp(from, op, func() { o.ms.Release(msg) }, msg.PieceCRCsOf)
	case wire.TypeRepOp:
		if from.Name.Type != "osd" {
			o.log.Warn("rep op from a non-OSD", "from", from.Name.String())
			return
		}
		m, err := wire.DecodeRepOp(msg.Payload)
		if err != nil {
			o.log.Warn("bad rep op", "from", from.Name.String(), "err", err)
			return
		}
		txncrc.Keep(m.Txn, msg.PieceCRCsOf)
		o.handleRepOp(from, m, func() { o.ms.Release(msg) })
	case wire.TypeRepIdle:
		if m, err := wire.DecodeRepIdle(msg.Payload); err != nil || from.Name.Type != "osd" {
			o.log.Warn("bad rep idle", "from", from.Name.String(), "err", err)
		} else {
			o.handleRepIdle(from, m)
		}
	case wire.TypeRepOpReply:
		m, err := wire.DecodeRepOpReply(msg.Payload)
		if err != nil {
			o.log.Warn("bad rep op reply", "from", from.Name.String(), "err", err)
			return
		}
		o.handleRepOpReply(from, m)
	case wire.TypePGQuery, wire.TypePGNotify, wire.TypePGPull, wire.TypePGPush, wire.TypePGActivate, wire.TypePGAck,
		wire.TypeScrubRequest, wire.TypeScrubMap, wire.TypePGRemove, wire.TypePGInfo:
		if from.Name.Type != "osd" {
			o.log.Warn("peering message from a non-OSD", "from", from.Name.String(), "type", msg.Type)
			return
		}
		h, m, err := decodePeering(msg)
		if err != nil {
			o.log.Warn("bad peering message", "from", from.Name.String(), "err", err)
			return
		}
		o.handlePeering(from, h, m)
	case wire.TypePGReserve:
		if from.Name.Type != "osd" {
			o.log.Warn("reservation message from a non-OSD", "from", from.Name.String())
			return
		}
		m, err := wire.DecodePGReserve(msg.Payload)
		if err != nil {
			o.log.Warn("bad reservation message", "from", from.Name.String(), "err", err)
			return
		}
		o.handleReserve(from, m)
	case wire.TypeDaemonCommand:
		m, err := wire.DecodeMonCommand(msg.Payload)
		if err != nil {
			o.log.Warn("bad command", "from", from.Name.String(), "err", err)
			return
		}
		go o.handleCommand(from, m)
	default:
		o.log.Info("message of an unknown type dropped", "from", from.Name.String(), "type", msg.Type)
	}
}

func (d dispatcher) HandleEvent(ev msgr.Event) {
	switch ev.Kind {
	case msgr.EventFailed, msgr.EventReset:
		d.o.forgetSession(ev.Session)
		d.o.watchSessionLost(ev.Session)
	case msgr.EventDialRefused:
		d.o.peerRefused(ev.Peer, ev.Addr)
	}
}

// decodePeering decodes a peering message and returns its interval.
func decodePeering(msg msgr.Message) (wire.PGInterval, any, error) {
	switch msg.Type {
	case wire.TypePGQuery:
		m, err := wire.DecodePGQuery(msg.Payload)
		return m.PGInterval, m, err
	case wire.TypePGNotify:
		m, err := wire.DecodePGNotify(msg.Payload)
		return m.PGInterval, m, err
	case wire.TypePGPull:
		m, err := wire.DecodePGPull(msg.Payload)
		return m.PGInterval, m, err
	case wire.TypePGPush:
		m, err := wire.DecodePGPush(msg.Payload)
		return m.PGInterval, m, err
	case wire.TypePGActivate:
		m, err := wire.DecodePGActivate(msg.Payload)
		return m.PGInterval, m, err
	case wire.TypeScrubRequest:
		m, err := wire.DecodeScrubRequest(msg.Payload)
		return m.PGInterval, m, err
	case wire.TypeScrubMap:
		m, err := wire.DecodeScrubMap(msg.Payload)
		return m.PGInterval, m, err
	case wire.TypePGRemove:
		m, err := wire.DecodePGRemove(msg.Payload)
		return m.PGInterval, m, err
	case wire.TypePGInfo:
		m, err := wire.DecodePGInfo(msg.Payload)
		return m.PGInterval, m, err
	default:
		m, err := wire.DecodePGAck(msg.Payload)
		return m.PGInterval, m, err
	}
}

// sendNow sends msg without blocking: if the session's send budget is
// used up, a goroutine waits for room. Answers go this way, so that the
// store's completion callbacks can send them; a peer reads answers in
// any order (by tid), so one that waits may arrive after later ones.
func (o *OSD) sendNow(to msgr.Peer, msg msgr.Message) {
	sent, err := to.Session.TrySend(msg)
	switch {
	case err != nil:
		o.log.Debug("answer not sent", "to", to.Name.String(), "type", msg.Type, "err", err)
	case !sent:
		o.spawn(func() {
			if err := to.Session.Send(o.ctx, msg); err != nil {
				o.log.Debug("answer not sent", "to", to.Name.String(), "type", msg.Type, "err", err)
			}
		})
	}
}

// spawn runs f in a goroutine that Close waits for, unless the OSD is
// closing: the store's callbacks may still run after Close has begun to
// wait.
func (o *OSD) spawn(f func()) {
	if o.ctx.Err() != nil {
		return
	}
	o.wg.Go(f)
}
