package mon

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/monstore"
	"github.com/cuttlestore/cuttle/internal/msgr"
	"github.com/cuttlestore/cuttle/internal/wire"
)

// osdmapService is the service whose epochs subscribers receive.
const osdmapService = "osdmap"

// maxIncsPerUpdate bounds the incrementals in one update; a subscriber
// further behind gets the full map instead.
const maxIncsPerUpdate = 100

// subscription is one session's interest in OSD map epochs.
type subscription struct {
	mu      sync.Mutex // one push at a time, so epochs go out in order
	session *msgr.Session
	next    uint64 // first epoch it has not got (0: wants the full map)
	oneShot bool
}

func (m *Monitor) subscribe(from msgr.Peer, s wire.MonSubscribe) {
	if s.What != osdmapService {
		m.log.Info("subscription to an unknown map", "from", from.Name.String(), "what", s.What)
		return
	}
	sub := &subscription{session: from.Session, next: s.Start, oneShot: s.OneShot}
	m.mu.Lock()
	m.subs[from.Session] = sub
	m.mu.Unlock()
	m.push(sub)
}

func (m *Monitor) unsubscribe(s *msgr.Session) {
	if s == nil {
		return
	}
	m.mu.Lock()
	delete(m.subs, s)
	m.mu.Unlock()
}

// notifySubscribers sends new epochs to every subscriber.
func (m *Monitor) notifySubscribers() {
	m.mu.Lock()
	subs := make([]*subscription, 0, len(m.subs))
	for _, s := range m.subs {
		subs = append(subs, s)
	}
	m.mu.Unlock()
	for _, s := range subs {
		go m.push(s)
	}
}

// push sends a subscriber the epochs it lacks: incrementals from its
// next epoch when the store still has them all and they are few, else
// the newest full map.
func (m *Monitor) push(sub *subscription) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	first, last, err := m.st.Epochs(osdmapService)
	if err != nil || last == 0 {
		if err != nil && !errors.Is(err, monstore.ErrNotFound) {
			m.log.Warn("subscription: read epochs", "err", err)
		}
		return
	}
	m.mu.Lock()
	next := sub.next
	m.mu.Unlock()
	if next > last {
		return
	}
	up := wire.OSDMapUpdate{Newest: last}
	if next == 0 || next < first || last-next >= maxIncsPerUpdate {
		full, err := m.st.Full(osdmapService, last)
		if err != nil {
			m.log.Warn("subscription: read full map", "epoch", last, "err", err)
			return
		}
		up.FullEpoch, up.Full = last, full
	} else {
		for e := next; e <= last; e++ {
			inc, err := m.st.Inc(osdmapService, e)
			if err != nil {
				m.log.Warn("subscription: read incremental", "epoch", e, "err", err)
				return
			}
			up.Incs = append(up.Incs, inc)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sub.session.Send(ctx, msgr.Message{Type: wire.TypeOSDMapUpdate, Version: 1, Payload: up.Encode()}); err != nil {
		m.unsubscribe(sub.session)
		return
	}
	m.mu.Lock()
	if sub.next <= last {
		sub.next = last + 1
	}
	if sub.oneShot {
		delete(m.subs, sub.session)
	}
	m.mu.Unlock()
}
