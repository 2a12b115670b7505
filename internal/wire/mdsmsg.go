package wire

import (
	"encoding/base64"
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// MDS beacons (Ceph's MMDSBeacon): every MDS daemon tells the monitors,
// every mds_beacon_interval, who it is, where it serves and what state
// it has reached; the monitors answer with what the MDS map says of it.
// A daemon whose beacons stop for mds_beacon_grace loses its rank to a
// standby (internal/mon/mdsmon).
//
// A beacon travels as the monitor command "mds beacon" with the encoded
// MDSBeacon, in base64, as its argument "beacon" (BeaconCommand), the way
// OSDs' boot and PG reports travel as commands: so it has the monitor
// client's resend, the monitors' authorization and their routing to the
// leader. The reply's Data is the encoded MDSBeaconReply.

// BeaconPrefix is the command prefix of a beacon.
const BeaconPrefix = "mds beacon"

// MDSBeacon is one beacon.
type MDSBeacon struct {
	// Name is the daemon's name ("a" for mds.a); Addr where it serves.
	Name, Addr string
	// Nonce is random per process start: a beacon with a new nonce is a
	// new incarnation, and the monitors fail the old one's rank.
	Nonce uint64
	// GID is what the monitors' last reply gave it (0 before).
	GID mdsmap.GID
	// Seq numbers the daemon's beacons; the reply echoes it.
	Seq uint64
	// State is the state the daemon has reached (boot at first; a rank
	// holder reports its progress: replay, reconnect, rejoin, active;
	// stopped when it finished stopping; damaged when it found its
	// rank's metadata damaged).
	State mdsmap.State
	// WantFS is the file system it prefers (mds_join_fs), empty for any;
	// WantRank the rank it prefers, mdsmap.NoRank for any.
	WantFS   string
	WantRank mdsmap.Rank
	// Epoch is the newest MDS map epoch the daemon has; a reply carries
	// the map when the monitors' is newer.
	Epoch mdsmap.Epoch
	// Health is what a rank holder reports of its clients and requests
	// (version 2; zero from a version 1 beacon or a daemon without a
	// rank).
	Health MDSHealth
}

// MDSHealth is a rank holder's report, in its beacons, of what the
// monitors' health checks MDS_SLOW_REQUEST and MDS_CLIENT_LATE_RELEASE
// show (Ceph's MDS health metrics), and of what fs status shows per
// rank.
type MDSHealth struct {
	// Sessions counts the client sessions; InFlight the requests
	// handed to the engine and not yet answered safe.
	Sessions, InFlight int
	// Slow counts the requests in flight for at least ComplaintTime
	// (mds_op_complaint_time); Oldest is the oldest one's age.
	Slow                  int
	ComplaintTime, Oldest time.Duration
	// LateRelease names at most MaxLateRelease of the clients that left
	// a cap revocation unanswered past half the revoke timeout, oldest
	// first; LateClients counts them all.
	LateRelease []MDSLateRelease
	LateClients int
	// Damaged counts the damaged metadata objects the rank has found
	// (requests in them get EIO): MDS_DAMAGE's "metadata damage
	// detected" (version 2).
	Damaged int
}

// MaxLateRelease bounds MDSHealth.LateRelease (Ceph summarizes past
// mds_health_summarize_threshold, 10, too).
const MaxLateRelease = 10

// MDSLateRelease is one client slow to give back a capability.
type MDSLateRelease struct {
	ClientID uint64
	// Entity is its entity name (client.admin); Host where it connects
	// from.
	Entity, Host string
	// Ino is the inode of its oldest unanswered revocation, Age how long
	// it has been outstanding.
	Ino uint64
	Age time.Duration
}

// Late reports whether h has anything for the health checks.
func (h MDSHealth) Late() bool { return h.Slow > 0 || h.LateClients > 0 || h.Damaged > 0 }

// maxHealthMillis bounds a duration in a health report (about 140
// years), so that it decodes to a time.Duration without overflow;
// maxHealthCount bounds a count.
const (
	maxHealthMillis = 1 << 42
	maxHealthCount  = 1 << 31
)

func (h MDSHealth) encode(e *encoding.Encoder) {
	mk := e.Begin(2, 1)
	e.Uvarint(uint64(h.Sessions))
	e.Uvarint(uint64(h.InFlight))
	e.Uvarint(uint64(h.Slow))
	e.Uvarint(uint64(h.ComplaintTime.Milliseconds()))
	e.Uvarint(uint64(h.Oldest.Milliseconds()))
	e.Uvarint(uint64(h.LateClients))
	e.Uvarint(uint64(len(h.LateRelease)))
	for _, l := range h.LateRelease {
		e.Uint64(l.ClientID)
		e.String(l.Entity)
		e.String(l.Host)
		e.Uint64(l.Ino)
		e.Uvarint(uint64(l.Age.Milliseconds()))
	}
	e.Uvarint(uint64(h.Damaged))
	e.End(mk)
}

func decodeMDSHealth(d *encoding.Decoder) MDSHealth {
	v := d.Begin(2)
	defer d.End()
	count := func() int {
		v := d.Uvarint()
		if v >= maxHealthCount {
			d.Fail(fmt.Errorf("%w: health count %d", encoding.ErrCorrupt, v))
			return 0
		}
		return int(v)
	}
	millis := func() time.Duration {
		v := d.Uvarint()
		if v >= maxHealthMillis {
			d.Fail(fmt.Errorf("%w: health duration %d ms", encoding.ErrCorrupt, v))
			return 0
		}
		return time.Duration(v) * time.Millisecond
	}
	h := MDSHealth{Sessions: count(), InFlight: count(), Slow: count(), ComplaintTime: millis(), Oldest: millis(), LateClients: count()}
	n := d.Count(19)
	if n > MaxLateRelease {
		d.Fail(fmt.Errorf("%w: %d late clients listed", encoding.ErrCorrupt, n))
		return MDSHealth{}
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		h.LateRelease = append(h.LateRelease, MDSLateRelease{ClientID: d.Uint64(), Entity: d.String(mdsmap.MaxName),
			Host: d.String(mdsmap.MaxAddr), Ino: d.Uint64(), Age: millis()})
	}
	if v >= 2 {
		h.Damaged = count()
	}
	if d.Err() == nil && (h.Slow > h.InFlight || h.LateClients < len(h.LateRelease)) {
		d.Fail(fmt.Errorf("%w: health: %d slow of %d in flight, %d late clients of %d listed", encoding.ErrCorrupt,
			h.Slow, h.InFlight, h.LateClients, len(h.LateRelease)))
	}
	return h
}

// Encode encodes b (version 2).
func (b MDSBeacon) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(2, 1)
	e.String(b.Name)
	e.String(b.Addr)
	e.Uint64(b.Nonce)
	e.Uvarint(uint64(b.GID))
	e.Uvarint(b.Seq)
	e.Uint8(uint8(b.State))
	e.String(b.WantFS)
	e.Varint(int64(b.WantRank))
	e.Uint32(uint32(b.Epoch))
	b.Health.encode(&e)
	e.End(mk)
	return e.Data()
}

// DecodeMDSBeacon decodes a beacon; an unknown state, an empty name or a
// rank out of range is an error.
func DecodeMDSBeacon(data []byte) (MDSBeacon, error) {
	d := encoding.NewDecoder(data)
	v := d.Begin(2)
	b := MDSBeacon{Name: d.String(mdsmap.MaxName), Addr: d.String(mdsmap.MaxAddr), Nonce: d.Uint64(), GID: mdsmap.GID(d.Uvarint()),
		Seq: d.Uvarint(), State: mdsmap.State(d.Uint8()), WantFS: d.String(mdsmap.MaxName)}
	rank := d.Varint()
	b.Epoch = mdsmap.Epoch(d.Uint32())
	if v >= 2 {
		b.Health = decodeMDSHealth(d)
	}
	d.End()
	if err := d.Finish(); err != nil {
		return MDSBeacon{}, fmt.Errorf("wire: mds beacon: %w", err)
	}
	if b.Name == "" || !b.State.Valid() || b.State == mdsmap.StateNone || rank < int64(mdsmap.NoRank) || rank >= mdsmap.MaxRanks {
		return MDSBeacon{}, fmt.Errorf("wire: mds beacon: %w: name %q, state %d, rank %d", encoding.ErrCorrupt, b.Name, b.State, rank)
	}
	b.WantRank = mdsmap.Rank(rank)
	return b, nil
}

// BeaconCommand is the monitor command that carries b.
func BeaconCommand(b MDSBeacon) Command {
	return NewCommand(BeaconPrefix, "beacon", base64.StdEncoding.EncodeToString(b.Encode()))
}

// BeaconFromCommand decodes the beacon a command carries.
func BeaconFromCommand(c Command) (MDSBeacon, error) {
	s, err := c.Str("beacon")
	if err != nil {
		return MDSBeacon{}, err
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return MDSBeacon{}, fmt.Errorf("wire: mds beacon: %w: %w", encoding.ErrCorrupt, err)
	}
	return DecodeMDSBeacon(raw)
}

// MDSBeaconReply is the monitors' answer to a beacon: what the map,
// as of Epoch, says of the daemon.
type MDSBeaconReply struct {
	Seq   uint64 // the beacon's
	GID   mdsmap.GID
	Epoch mdsmap.Epoch
	// State is the daemon's state in the map: standby, standby-replay,
	// a rank holder's, or none (it is not in the map: it was failed, or
	// replaced; it must restart as a new incarnation).
	State mdsmap.State
	FS    mdsmap.FSID
	Rank  mdsmap.Rank
	// Map is the encoded MDS map when the beacon's epoch was older.
	Map []byte
}

// maxMDSMapBytes bounds an MDS map in a reply.
const maxMDSMapBytes = 16 << 20

// Encode encodes r (version 1).
func (r MDSBeaconReply) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(r.Seq)
	e.Uvarint(uint64(r.GID))
	e.Uint32(uint32(r.Epoch))
	e.Uint8(uint8(r.State))
	e.Varint(int64(r.FS))
	e.Varint(int64(r.Rank))
	e.Bytes(r.Map)
	e.End(mk)
	return e.Data()
}

// DecodeMDSBeaconReply decodes a reply (the map stays encoded).
func DecodeMDSBeaconReply(data []byte) (MDSBeaconReply, error) {
	d := encoding.NewDecoder(data)
	d.Begin(1)
	r := MDSBeaconReply{Seq: d.Uvarint(), GID: mdsmap.GID(d.Uvarint()), Epoch: mdsmap.Epoch(d.Uint32()), State: mdsmap.State(d.Uint8())}
	fs, rank := d.Varint(), d.Varint()
	r.Map = d.Bytes(maxMDSMapBytes)
	d.End()
	if err := d.Finish(); err != nil {
		return MDSBeaconReply{}, fmt.Errorf("wire: mds beacon reply: %w", err)
	}
	if !r.State.Valid() || fs < 0 || fs >= 1<<31 || rank < int64(mdsmap.NoRank) || rank >= mdsmap.MaxRanks {
		return MDSBeaconReply{}, fmt.Errorf("wire: mds beacon reply: %w: state %d, rank %d:%d", encoding.ErrCorrupt, r.State, fs, rank)
	}
	r.FS, r.Rank = mdsmap.FSID(fs), mdsmap.Rank(rank)
	if len(r.Map) == 0 {
		r.Map = nil
	}
	return r, nil
}
