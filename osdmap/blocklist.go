package osdmap

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
)

// The blocklist (Ceph's OSDMap blocklist, once "blacklist"): addresses of
// clients and daemons that must no longer reach the OSDs — a failed MDS,
// a client whose capabilities were taken away — each until an expiry. An
// entry is "host:port/nonce" (one process at that address: Ceph's
// entity_addr_t with its nonce; a failed MDS is fenced so, and its
// restart, with a new nonce, is not), "host:port" (that address) or
// "host" (every port of the host).
// The monitors add and remove entries (osd blocklist add, rm; the MDS-map
// service fences failed MDS daemons); the OSDs refuse the ops of a
// blocklisted client (internal/osd's blocklist.go). A client's instance
// address is what its OSD sessions show (msgr's Session.PeerAddr): the
// host its connections come from, the port it listens on (0 for a
// client) and its messenger's nonce.

// Limits of the blocklist.
const (
	MaxBlocklist     = 1 << 16
	MaxBlocklistAddr = 256
)

// checkBlocklistAddr validates an entry's address.
func checkBlocklistAddr(a string) error {
	if a == "" || len(a) > MaxBlocklistAddr || strings.ContainsAny(a, " \t\n,") {
		return fmt.Errorf("blocklist address %q: want host or host:port, at most %d bytes", a, MaxBlocklistAddr)
	}
	return nil
}

// Blocklist returns the entries and their expiry times (a copy).
func (m *Map) Blocklist() map[string]time.Time { return maps.Clone(m.blocklist) }

// BlocklistLen returns the number of entries, expired ones included.
func (m *Map) BlocklistLen() int { return len(m.blocklist) }

// BlocklistAddrs returns the entries' addresses, sorted.
func (m *Map) BlocklistAddrs() []string { return slices.Sorted(maps.Keys(m.blocklist)) }

// IsBlocklisted reports whether addr ("host:port/nonce" or "host:port")
// is blocklisted at now, by its own entry, its address's without the
// nonce, or its host's.
func (m *Map) IsBlocklisted(addr string, now time.Time) bool {
	live := func(a string) bool {
		exp, ok := m.blocklist[a]
		return ok && now.Before(exp)
	}
	if live(addr) {
		return true
	}
	if i := strings.LastIndexByte(addr, '/'); i > 0 {
		addr = addr[:i]
		if live(addr) {
			return true
		}
	}
	if i := strings.LastIndexByte(addr, ':'); i > 0 && live(addr[:i]) {
		return true
	}
	return false
}

func (m *Map) setBlocklist(s *Spec) error {
	if len(s.Blocklist) > MaxBlocklist {
		return fmt.Errorf("%d blocklist entries, at most %d", len(s.Blocklist), MaxBlocklist)
	}
	m.blocklist = make(map[string]time.Time, len(s.Blocklist))
	for a, exp := range s.Blocklist {
		if err := checkBlocklistAddr(a); err != nil {
			return err
		}
		if err := checkTime("blocklist expiry", exp); err != nil {
			return err
		}
		m.blocklist[a] = normTime(exp)
	}
	return nil
}

// encodeBlocklist appends entries in address order: count, then address
// string and expiry time each.
func encodeBlocklist(e *encoding.Encoder, bl map[string]time.Time) {
	e.Uvarint(uint64(len(bl)))
	for _, a := range slices.Sorted(maps.Keys(bl)) {
		e.String(a)
		encodeTime(e, bl[a])
	}
}

func decodeBlocklist(d *encoding.Decoder) map[string]time.Time {
	n := d.Count(3)
	if n > MaxBlocklist {
		d.Fail(fmt.Errorf("osdmap: %d blocklist entries: %w", n, encoding.ErrCorrupt))
		return nil
	}
	var out map[string]time.Time
	for range n {
		a := d.String(MaxBlocklistAddr)
		t := decodeTime(d)
		if d.Err() != nil {
			return nil
		}
		if out == nil {
			out = make(map[string]time.Time, n)
		}
		if _, dup := out[a]; dup {
			d.Fail(fmt.Errorf("osdmap: blocklist entry %q twice: %w", a, encoding.ErrCorrupt))
			return nil
		}
		out[a] = t
	}
	return out
}
