package mon

import (
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/encoding"
)

// MonInfo is one monitor of the cluster.
type MonInfo struct {
	Name string // "a": the entity is mon.a
	Addr string // host:port it listens on
}

// MonMap is the set of monitors, fixed at cluster creation. A monitor's
// Raft id is its position in Mons plus one.
type MonMap struct {
	FSID string
	Mons []MonInfo
}

// ID returns the Raft id of the monitor called name (0 if none).
func (m MonMap) ID(name string) uint64 {
	for i, mi := range m.Mons {
		if mi.Name == name {
			return uint64(i + 1)
		}
	}
	return 0
}

// ByID returns the monitor with Raft id id.
func (m MonMap) ByID(id uint64) (MonInfo, bool) {
	if id == 0 || id > uint64(len(m.Mons)) {
		return MonInfo{}, false
	}
	return m.Mons[id-1], true
}

// Validate checks names and addresses are present and unique, and that
// the count is 1, 3 or 5 (an even count only adds a monitor that can fail
// without adding one that may).
func (m MonMap) Validate() error {
	if m.FSID == "" {
		return fmt.Errorf("mon: monmap without fsid")
	}
	switch len(m.Mons) {
	case 1, 3, 5, 7:
	default:
		return fmt.Errorf("mon: %d monitors; use 1, 3, 5 or 7 (an odd number)", len(m.Mons))
	}
	seen := map[string]bool{}
	for _, mi := range m.Mons {
		if mi.Name == "" || strings.ContainsAny(mi.Name, ". =,") || mi.Addr == "" {
			return fmt.Errorf("mon: bad monitor %q at %q (want NAME=HOST:PORT, NAME without dots)", mi.Name, mi.Addr)
		}
		if seen[mi.Name] || seen["@"+mi.Addr] {
			return fmt.Errorf("mon: monitor %q or address %q twice", mi.Name, mi.Addr)
		}
		seen[mi.Name], seen["@"+mi.Addr] = true, true
	}
	return nil
}

// ParseMonMap parses "a=host:port,b=host:port".
func ParseMonMap(fsid, s string) (MonMap, error) {
	m := MonMap{FSID: fsid}
	for _, part := range strings.Split(s, ",") {
		name, addr, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return MonMap{}, fmt.Errorf("mon: bad monitor %q (want NAME=HOST:PORT)", part)
		}
		m.Mons = append(m.Mons, MonInfo{Name: name, Addr: addr})
	}
	return m, m.Validate()
}

func (m MonMap) String() string {
	parts := make([]string, len(m.Mons))
	for i, mi := range m.Mons {
		parts[i] = mi.Name + "=" + mi.Addr
	}
	return strings.Join(parts, ",")
}

// Encode encodes m: version 1: fsid string, count, (name, addr) strings.
func (m MonMap) Encode() []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.String(m.FSID)
	e.Uvarint(uint64(len(m.Mons)))
	for _, mi := range m.Mons {
		e.String(mi.Name)
		e.String(mi.Addr)
	}
	e.End(mk)
	return e.Data()
}

// DecodeMonMap decodes and validates an encoded MonMap.
func DecodeMonMap(b []byte) (MonMap, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	m := MonMap{FSID: d.String(256)}
	n := d.Count(2)
	for i := 0; i < n && i < 16 && d.Err() == nil; i++ {
		m.Mons = append(m.Mons, MonInfo{Name: d.String(256), Addr: d.String(1024)})
	}
	d.End()
	if err := d.Finish(); err != nil {
		return MonMap{}, fmt.Errorf("mon: monmap: %w", err)
	}
	if err := m.Validate(); err != nil {
		return MonMap{}, err
	}
	return m, nil
}
