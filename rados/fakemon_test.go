package rados_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
	"github.com/cuttlestore/cuttle/osdmap"
)

// fakeMon serves the cluster's published OSD maps to subscribers (full
// map first, incrementals after) and answers a few commands.
type fakeMon struct {
	c    *cluster
	name string
	addr string
	ms   *msgr.Messenger

	mu   sync.Mutex
	subs map[*msgr.Session]*monSub
}

type monSub struct {
	mu   sync.Mutex // one push at a time
	next osdmap.Epoch
	full bool // wants a full map first
}

func (c *cluster) startMon(name string) (*fakeMon, error) {
	m := &fakeMon{c: c, name: name, addr: "mon-" + name + ":6789", subs: map[*msgr.Session]*monSub{}}
	ms, err := newDaemonMessenger(c, auth.EntityName{Type: "mon", ID: name}, m.addr, m, "mon")
	if err != nil {
		return nil, err
	}
	m.ms = ms
	return m, nil
}

func (m *fakeMon) Dispatch(from msgr.Peer, msg msgr.Message) {
	switch msg.Type {
	case wire.TypeMonSubscribe:
		s, err := wire.DecodeMonSubscribe(msg.Payload)
		if err != nil {
			return
		}
		m.c.mu.Lock()
		m.c.subs = append(m.c.subs, subRecord{m.name, s})
		m.c.mu.Unlock()
		m.mu.Lock()
		sub := m.subs[from.Session]
		if sub == nil {
			sub = &monSub{}
			m.subs[from.Session] = sub
		}
		m.mu.Unlock()
		sub.mu.Lock()
		sub.next, sub.full = osdmap.Epoch(s.Start), s.Start == 0
		sub.mu.Unlock()
		m.push(from.Session, sub)
	case wire.TypeMonCommand:
		cmd, err := wire.DecodeMonCommand(msg.Payload)
		if err != nil {
			return
		}
		r := m.c.command(cmd.Cmd)
		reply := wire.MonCommandReply{Tid: cmd.Tid, Reply: r}
		_ = from.Session.Send(context.Background(), msgr.Message{Type: wire.TypeMonCommandReply, Version: 1, Payload: reply.Encode()})
	}
}

func (m *fakeMon) HandleEvent(ev msgr.Event) {
	if ev.Kind == msgr.EventFailed || ev.Kind == msgr.EventReset {
		m.mu.Lock()
		delete(m.subs, ev.Session)
		m.mu.Unlock()
	}
}

// pushAll sends every subscriber the epochs it lacks.
func (m *fakeMon) pushAll() {
	m.mu.Lock()
	subs := make(map[*msgr.Session]*monSub, len(m.subs))
	for s, sub := range m.subs {
		subs[s] = sub
	}
	m.mu.Unlock()
	for s, sub := range subs {
		m.push(s, sub)
	}
}

func (m *fakeMon) push(s *msgr.Session, sub *monSub) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	m.c.mu.Lock()
	pub := m.c.pubEpoch
	maps := m.c.maps[:pub]
	m.c.mu.Unlock()
	if !sub.full && sub.next > pub {
		return
	}
	u := wire.OSDMapUpdate{Newest: uint64(pub)}
	if sub.full || sub.next < 2 {
		b, err := maps[pub-1].MarshalBinary()
		if err != nil {
			m.c.logf("mon: marshal map: %v", err)
			return
		}
		u.FullEpoch, u.Full = uint64(pub), b
	} else {
		for e := sub.next; e <= pub; e++ {
			b, err := osdmap.Diff(maps[e-2], maps[e-1]).MarshalBinary()
			if err != nil {
				m.c.logf("mon: marshal incremental: %v", err)
				return
			}
			u.Incs = append(u.Incs, b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Send(ctx, msgr.Message{Type: wire.TypeOSDMapUpdate, Version: 1, Payload: u.Encode()}); err != nil {
		return
	}
	sub.next, sub.full = pub+1, false
}

// command answers the monitor commands the client's tests use.
func (c *cluster) command(cmd wire.Command) wire.Reply {
	c.mu.Lock()
	c.commands = append(c.commands, cmd)
	c.mu.Unlock()
	switch cmd.Prefix {
	case "osd pool create":
		name, err := cmd.Str("pool")
		if err != nil {
			return wire.FromError(err, wire.EINVAL)
		}
		pgNum, err := cmd.IntOr("pg_num", 8)
		if err != nil {
			return wire.FromError(err, wire.EINVAL)
		}
		if c.newest().PoolByName(name) != nil {
			return wire.Reply{Status: "pool '" + name + "' already exists"}
		}
		var pool osdmap.Pool
		c.newEpoch(func(m *osdmap.Map, inc *osdmap.Incremental) {
			id := m.PoolMax() + 1
			inc.NewPoolMax = &id
			pool = osdmap.Pool{ID: id, Name: name, Type: osdmap.PoolReplicated, Size: min(3, c.cfg.osds), MinSize: 1,
				PGNum: uint32(pgNum), PGPNum: uint32(pgNum), Flags: osdmap.PoolHashPSPool, LastChange: inc.Epoch}
			inc.NewPools = []osdmap.Pool{pool}
		})
		if err := c.createCollections(pool); err != nil {
			return wire.Errorf(wire.EINVAL, "%v", err)
		}
		data, _ := json.Marshal(map[string]any{"pool": name, "pool_id": pool.ID})
		return wire.Reply{Status: "pool '" + name + "' created", Data: data}
	case "osd pool rm":
		name, _ := cmd.Str("pool")
		p := c.newest().PoolByName(name)
		if p == nil {
			return wire.Reply{Status: "pool '" + name + "' does not exist"}
		}
		c.newEpoch(func(_ *osdmap.Map, inc *osdmap.Incremental) { inc.OldPools = []int64{p.ID} })
		return wire.Reply{Status: "pool '" + name + "' removed"}
	case "pg query":
		c.mu.Lock()
		state, ok := c.pgStates[cmd.StrOr("pgid", "")]
		c.mu.Unlock()
		if !ok {
			return wire.Errorf(wire.ENOENT, "pg %s does not exist", cmd.StrOr("pgid", ""))
		}
		data, _ := json.Marshal(map[string]any{"pgid": cmd.StrOr("pgid", ""), "state": state})
		return wire.Reply{Data: data}
	case "echo":
		return wire.Reply{Status: "echo", Text: cmd.StrOr("text", ""), Data: []byte(strconv.Quote(cmd.StrOr("text", "")))}
	}
	return wire.Errorf(wire.EINVAL, "unknown command %q", cmd.Prefix)
}
