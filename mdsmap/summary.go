package mdsmap

import (
	"fmt"
	"strings"
)

// Summary is the map in one line, as Ceph's "mds:" line of "ceph -s":
//
//	cephfs:1 {0=a=up:active} 1 up:standby
//
// Each file system as NAME:IN (NAME:UP/IN while ranks are failed), then
// the rank holders (prefixed with their file system's name when there are
// several), then the counts of standby-replay daemons, standbys, failed
// and damaged ranks.
func (m *Map) Summary() string {
	var fss, ranks []string
	failed, damaged := 0, 0
	ids := m.FSIDs()
	for _, id := range ids {
		f := m.FS[id]
		if len(f.Up) < len(f.In) {
			fss = append(fss, fmt.Sprintf("%s:%d/%d", f.Name, len(f.Up), len(f.In)))
		} else {
			fss = append(fss, fmt.Sprintf("%s:%d", f.Name, len(f.In)))
		}
		for _, r := range f.In {
			d := m.Holder(id, r)
			if d == nil {
				continue
			}
			prefix := ""
			if len(ids) > 1 {
				prefix = f.Name + ":"
			}
			ranks = append(ranks, fmt.Sprintf("%s%d=%s=%s", prefix, r, d.Name, d.State.Up()))
		}
		failed += len(f.Failed())
		damaged += len(f.Damaged)
	}
	var parts []string
	if len(fss) > 0 {
		parts = append(parts, strings.Join(fss, " "))
		if len(ranks) > 0 {
			parts = append(parts, "{"+strings.Join(ranks, ",")+"}")
		}
	}
	if n := len(m.StandbyReplays()); n > 0 {
		parts = append(parts, fmt.Sprintf("%d up:standby-replay", n))
	}
	if n := len(m.Standbys()); n > 0 || len(fss) == 0 {
		parts = append(parts, fmt.Sprintf("%d up:standby", n))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", failed))
	}
	if damaged > 0 {
		parts = append(parts, fmt.Sprintf("%d damaged", damaged))
	}
	return strings.Join(parts, " ")
}
