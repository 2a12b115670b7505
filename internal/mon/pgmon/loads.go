package pgmon

import (
	"fmt"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// This file publishes the OSDs' loads (docs/OSD.md, "Reading from
// replicas"): the OSDs report them with their PG stats, rounded to 10%
// (internal/loadstat), and Tick asks osdmon to put those that differ from
// the map's in the map with "osd set-loads", at most once per
// LoadPublishInterval, so that loads cost the map an epoch now and then,
// not one per report. Clients with read_policy score read them from their
// map.

// LoadPublishInterval is the least time between two publications of the
// OSDs' loads.
const LoadPublishInterval = 30 * time.Second

// loadsCommand returns the "osd set-loads" command that brings m's loads
// in step with the reported ones, or false when they are, or when the
// last was asked less than LoadPublishInterval before now.
func (s *Service) loadsCommand(m *osdmap.Map, now time.Time) (moncmd.Command, bool) {
	if !s.loadsAsked.IsZero() && now.Sub(s.loadsAsked) < LoadPublishInterval {
		return moncmd.Command{}, false
	}
	var parts []string
	for id := range m.MaxOSD() {
		u, ok := s.st.osds[id]
		if !ok || !m.Exists(id) || m.OSD(id).Load == u.load {
			continue
		}
		parts = append(parts, FormatLoad(id, u.load))
	}
	if len(parts) == 0 {
		return moncmd.Command{}, false
	}
	s.loadsAsked = now
	return moncmd.New("osd set-loads", "loads", strings.Join(parts, ",")), true
}

// FormatLoad writes one OSD's load as "osd set-loads" takes it:
// ID:DISK/CPU/MEMORY, in percent.
func FormatLoad(id int32, l osdmap.Load) string {
	return fmt.Sprintf("%d:%d/%d/%d", id, l.Disk, l.CPU, l.Memory)
}
