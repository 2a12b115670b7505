package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/rados"
)

// The session map: the clients that hold sessions with a rank, kept in
// the metadata pool so that whoever holds the rank next knows whom to
// wait for in its reconnect phase. Object mds<RANK>_sessionmap, one
// omap key per client (its id as 16 hex digits), the value a
// sessionRecord. A session is recorded before the client is told it is
// open, and removed after it closed; a record may outlive its session
// (the rank died between the two), which costs the next holder at most
// the reconnect timeout.

// SessionMapObject is rank's session map object.
func SessionMapObject(rank int) string { return fmt.Sprintf("mds%d_sessionmap", rank) }

// sessionKey is client's omap key.
func sessionKey(c ClientID) string { return fmt.Sprintf("%016x", uint64(c)) }

// sessionRecord is a session as the map stores it.
type sessionRecord struct {
	Client ClientID
	Name   string
	Root   string
	// Instance (version 2) is the client's RADOS instance, what fences
	// it (wire.ClientSession.Instance); empty for an older client.
	Instance string
}

// maxSessionField bounds a record's strings.
const maxSessionField = 64 << 10

func (r sessionRecord) encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	e.Uvarint(uint64(r.Client))
	e.String(r.Name)
	e.String(r.Root)
	e.String(r.Instance)
	e.End(mk)
	return e.Data()
}

func decodeSessionRecord(b []byte) (sessionRecord, error) {
	d := encoding.NewDecoder(b)
	v := d.Begin(2)
	r := sessionRecord{Client: ClientID(d.Uvarint()), Name: d.String(maxSessionField), Root: d.String(maxSessionField)}
	if v >= 2 {
		r.Instance = d.String(maxSessionField)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return sessionRecord{}, fmt.Errorf("mds: session record: %w", err)
	}
	if r.Client == 0 {
		return sessionRecord{}, fmt.Errorf("mds: session record: %w: client 0", encoding.ErrCorrupt)
	}
	return r, nil
}

// sessionStore keeps a rank's session map.
type sessionStore interface {
	Load(ctx context.Context, rank int) ([]sessionRecord, error)
	Save(ctx context.Context, rank int, r sessionRecord) error
	Remove(ctx context.Context, rank int, c ClientID) error
}

// radosSessions keeps the session map in the metadata pool.
type radosSessions struct{ io *rados.IOContext }

// sessionPage is how many records one omap read returns.
const sessionPage = 1024

func (s radosSessions) Load(ctx context.Context, rank int) ([]sessionRecord, error) {
	var out []sessionRecord
	after := ""
	for {
		kvs, more, err := s.io.GetOmapValues(ctx, SessionMapObject(rank), after, "", sessionPage)
		if errors.Is(err, rados.ErrNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("mds: read %s: %w", SessionMapObject(rank), err)
		}
		for _, kv := range kvs {
			r, err := decodeSessionRecord(kv.Value)
			if err != nil {
				return nil, fmt.Errorf("%s key %s: %w", SessionMapObject(rank), kv.Key, err)
			}
			if id, perr := strconv.ParseUint(kv.Key, 16, 64); perr != nil || ClientID(id) != r.Client {
				return nil, fmt.Errorf("mds: %s key %q holds client %d: %w", SessionMapObject(rank), kv.Key, r.Client, encoding.ErrCorrupt)
			}
			out = append(out, r)
			after = kv.Key
		}
		if !more || len(kvs) == 0 {
			return out, nil
		}
	}
}

func (s radosSessions) Save(ctx context.Context, rank int, r sessionRecord) error {
	if err := s.io.SetOmap(ctx, SessionMapObject(rank), map[string][]byte{sessionKey(r.Client): r.encode()}); err != nil {
		return fmt.Errorf("mds: record session of client %d: %w", r.Client, err)
	}
	return nil
}

func (s radosSessions) Remove(ctx context.Context, rank int, c ClientID) error {
	err := s.io.RmOmapKeys(ctx, SessionMapObject(rank), sessionKey(c))
	if err != nil && !errors.Is(err, rados.ErrNotFound) {
		return fmt.Errorf("mds: forget session of client %d: %w", c, err)
	}
	return nil
}
