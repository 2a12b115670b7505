package mdcache

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/mds/mdtypes"
	"github.com/cuttlestore/cuttle/rados"
)

// The completed requests outlive the journal events that recorded
// them: each write-back saves them in the rank's object
// "mds<rank>_completed" before it trims the journal, so a request
// resent after a failover is recognised however long ago it was
// journaled (docs/FORMATS.md, "MDS completed requests").

func completedObject(rank int) string { return fmt.Sprintf("mds%d_completed", rank) }

// maxCompletedClients bounds the decoder.
const maxCompletedClients = 1 << 20

// marshalCompleted encodes the completed requests (version 1).
func marshalCompleted(m map[ClientID]*clientReqs) []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	clients := slices.Sorted(maps.Keys(m))
	e.Uvarint(uint64(len(clients)))
	for _, cl := range clients {
		e.Uvarint(uint64(cl))
		done := m[cl].done
		tids := slices.Sorted(maps.Keys(done))
		e.Uvarint(uint64(len(tids)))
		for _, t := range tids {
			e.Uvarint(t)
			e.Varint(int64(done[t].result))
			e.Uvarint(uint64(done[t].createdIno))
		}
	}
	e.End(mk)
	return e.Data()
}

// unmarshalCompleted decodes what marshalCompleted wrote.
func unmarshalCompleted(b []byte) (map[ClientID]*clientReqs, error) {
	d := encoding.NewDecoder(b)
	out := map[ClientID]*clientReqs{}
	d.Begin(1)
	n := d.Count(2)
	if n > maxCompletedClients {
		d.Fail(fmt.Errorf("%w: %d clients", encoding.ErrCorrupt, n))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		cl := ClientID(d.Uvarint())
		k := d.Count(3)
		cr := &clientReqs{done: make(map[uint64]completion, min(k, 1024))}
		for j := 0; j < k && d.Err() == nil; j++ {
			tid := d.Uvarint()
			res := d.Varint()
			ino := d.Uvarint()
			if res > 0 || res < -4095 {
				d.Fail(fmt.Errorf("%w: result %d", encoding.ErrCorrupt, res))
			}
			cr.done[tid] = completion{result: int32(res), createdIno: mdtypes.Ino(ino)}
		}
		out[cl] = cr
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("mdcache: completed requests: %w", err)
	}
	return out, nil
}

// loadSessions reads the completed requests (none if the object is
// missing). c.mu is held.
func (c *Cache) loadSessions(ctx context.Context) error {
	obj := completedObject(c.cfg.Rank)
	b, err := c.cfg.Meta.Read(ctx, obj, 0, 0)
	if errors.Is(err, rados.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mdcache: read %q: %w", obj, err)
	}
	m, err := unmarshalCompleted(b)
	if err != nil {
		return fmt.Errorf("mdcache: %q: %w", obj, err)
	}
	c.completed = m
	return nil
}
