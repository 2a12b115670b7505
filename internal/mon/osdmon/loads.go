package osdmon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/osdmap"
)

// prepareSetLoads handles "osd set-loads loads=ID:DISK/CPU/MEMORY,...":
// it publishes the OSDs' loads (percent) in their map entries, for
// clients with read_policy score (docs/OSD.md, "Reading from
// replicas"). The monitors' pgmap service sends it, at most every 30 s,
// when the loads the OSDs report differ from the map's; nothing is
// proposed when the map has them already.
func (s *Service) prepareSetLoads(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	raw, err := c.Str("loads")
	if err != nil {
		return bad(err)
	}
	loads, err := parseLoads(raw)
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "%s: %v", c.Prefix, err)
	}
	t := s.begin(now)
	var changes []string
	for _, l := range loads {
		if !t.base.Exists(l.id) || t.base.OSD(l.id).Load == l.load {
			continue
		}
		if err := t.inc.SetLoad(t.base, l.id, l.load); err != nil {
			return nil, moncmd.Errorf(moncmd.EINVAL, "%s: %v", c.Prefix, err)
		}
		changes = append(changes, fmt.Sprintf("osd.%d %s", l.id, l.load))
	}
	if len(changes) == 0 {
		return t.unchanged()
	}
	return t.propose(t.status("loads: " + strings.Join(changes, ", ")))
}

type osdLoad struct {
	id   int32
	load osdmap.Load
}

// parseLoads parses "ID:DISK/CPU/MEMORY" items separated by commas.
func parseLoads(s string) ([]osdLoad, error) {
	var out []osdLoad
	seen := map[int32]bool{}
	for _, item := range strings.Split(s, ",") {
		id, rest, ok := strings.Cut(item, ":")
		parts := strings.Split(rest, "/")
		n, err := strconv.ParseInt(id, 10, 32)
		if !ok || err != nil || n < 0 || len(parts) != 3 {
			return nil, fmt.Errorf("load %q: want ID:DISK/CPU/MEMORY in percent", item)
		}
		var pct [3]uint8
		for i, p := range parts {
			v, err := strconv.ParseUint(p, 10, 8)
			if err != nil || v > 100 {
				return nil, fmt.Errorf("load %q: %q is not a percent", item, p)
			}
			pct[i] = uint8(v)
		}
		if seen[int32(n)] {
			return nil, fmt.Errorf("osd.%d twice", n)
		}
		seen[int32(n)] = true
		out = append(out, osdLoad{id: int32(n), load: osdmap.Load{Disk: pct[0], CPU: pct[1], Memory: pct[2]}})
	}
	return out, nil
}
