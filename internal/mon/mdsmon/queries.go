package mdsmon

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/mdsmap"
)

// DaemonView is a daemon in JSON replies.
type DaemonView struct {
	GID   uint64 `json:"gid"`
	Name  string `json:"name"`
	Addr  string `json:"addr"`
	State string `json:"state"` // "up:active"
	// FS and Rank: the rank held or followed; rank -1 for a standby.
	FS     string `json:"fs,omitempty"`
	Rank   int32  `json:"rank"`
	JoinFS string `json:"join_fs,omitempty"`
	Since  uint32 `json:"state_since_epoch"`
}

// RankView is one rank of a file system.
type RankView struct {
	Rank     int32       `json:"rank"`
	State    string      `json:"state"` // the holder's, or "failed" or "damaged"
	Holder   *DaemonView `json:"mds,omitempty"`
	Follower *DaemonView `json:"standby_replay,omitempty"`
	// Clients and Requests are the holder's client sessions and
	// requests in flight, from its latest beacon (the leader's memory:
	// absent before the first report).
	Clients  *int `json:"clients,omitempty"`
	Requests *int `json:"requests_in_flight,omitempty"`
}

// FSView is a file system in JSON replies.
type FSView struct {
	ID                 int32      `json:"id"`
	Name               string     `json:"name"`
	MetadataPool       string     `json:"metadata_pool"`
	MetadataPoolID     int64      `json:"metadata_pool_id"`
	DataPools          []string   `json:"data_pools"`
	DataPoolIDs        []int64    `json:"data_pool_ids"`
	MaxMDS             int        `json:"max_mds"`
	StandbyCountWanted int        `json:"standby_count_wanted"`
	Joinable           bool       `json:"joinable"`
	AllowStandbyReplay bool       `json:"allow_standby_replay"`
	Down               bool       `json:"down"`
	SessionTimeout     int        `json:"session_timeout"`
	SessionAutoclose   int        `json:"session_autoclose"`
	Created            uint32     `json:"created_epoch"`
	Modified           uint32     `json:"modified_epoch"`
	Ranks              []RankView `json:"ranks"`
}

// MapView is the map in JSON replies (fs dump, fs status).
type MapView struct {
	Epoch       uint32       `json:"epoch"`
	FileSystems []FSView     `json:"filesystems"`
	Standbys    []DaemonView `json:"standbys"`
	Summary     string       `json:"summary"`
}

func (s *Service) poolName(id int64) string {
	if om := s.cfg.OSDMap(); om != nil {
		if p := om.Pool(id); p != nil {
			return p.Name
		}
	}
	return fmt.Sprint(id)
}

func (s *Service) daemonView(d *mdsmap.Daemon) *DaemonView {
	if d == nil {
		return nil
	}
	v := &DaemonView{GID: uint64(d.GID), Name: d.Name, Addr: d.Addr, State: d.State.Up(), Rank: int32(d.Rank), JoinFS: d.JoinFS, Since: uint32(d.Since)}
	if f := s.m.FS[d.FS]; f != nil {
		v.FS = f.Name
	}
	return v
}

func (s *Service) fsView(f *mdsmap.FS) FSView {
	v := FSView{ID: int32(f.ID), Name: f.Name, MetadataPool: s.poolName(f.MetadataPool), MetadataPoolID: f.MetadataPool,
		DataPoolIDs: f.DataPools, MaxMDS: f.MaxMDS, StandbyCountWanted: f.StandbyWanted, Joinable: f.Has(mdsmap.Joinable),
		AllowStandbyReplay: f.Has(mdsmap.AllowStandbyReplay), Down: f.Has(mdsmap.Down),
		SessionTimeout: int(f.SessionTimeout.Seconds()), SessionAutoclose: int(f.SessionAutoclose.Seconds()),
		Created: uint32(f.Created), Modified: uint32(f.Modified), Ranks: []RankView{}}
	for _, p := range f.DataPools {
		v.DataPools = append(v.DataPools, s.poolName(p))
	}
	for _, r := range f.In {
		rv := RankView{Rank: int32(r), Holder: s.daemonView(s.m.Holder(f.ID, r)), Follower: s.daemonView(s.m.Follower(f.ID, r))}
		if h := s.m.Holder(f.ID, r); h != nil {
			if rep, ok := s.reports[h.GID]; ok {
				rv.Clients, rv.Requests = &rep.Sessions, &rep.InFlight
			}
		}
		switch {
		case rv.Holder != nil:
			rv.State = strings.TrimPrefix(rv.Holder.State, "up:")
		case isDamaged(f, r):
			rv.State = "damaged"
		default:
			rv.State = "failed"
		}
		v.Ranks = append(v.Ranks, rv)
	}
	return v
}

func isDamaged(f *mdsmap.FS, r mdsmap.Rank) bool {
	for _, x := range f.Damaged {
		if x == r {
			return true
		}
	}
	return false
}

func (s *Service) mapView(only *mdsmap.FS) MapView {
	v := MapView{Epoch: uint32(s.m.Epoch), FileSystems: []FSView{}, Standbys: []DaemonView{}, Summary: s.m.Summary()}
	for _, id := range s.m.FSIDs() {
		if only == nil || only.ID == id {
			v.FileSystems = append(v.FileSystems, s.fsView(s.m.FS[id]))
		}
	}
	for _, d := range s.m.Standbys() {
		v.Standbys = append(v.Standbys, *s.daemonView(d))
	}
	return v
}

func replyJSON(v any, text string) moncmd.Reply {
	data, err := json.Marshal(v)
	if err != nil {
		return moncmd.Errorf(moncmd.EINVAL, "mdsmon: encoding reply: %v", err)
	}
	return moncmd.Reply{Data: data, Text: text}
}

// queryLs answers "fs ls" as Ceph prints it.
func (s *Service) queryLs(moncmd.Command) moncmd.Reply {
	type ls struct {
		Name           string   `json:"name"`
		MetadataPool   string   `json:"metadata_pool"`
		MetadataPoolID int64    `json:"metadata_pool_id"`
		DataPoolIDs    []int64  `json:"data_pool_ids"`
		DataPools      []string `json:"data_pools"`
	}
	out := []ls{}
	var b strings.Builder
	for _, id := range s.m.FSIDs() {
		v := s.fsView(s.m.FS[id])
		out = append(out, ls{v.Name, v.MetadataPool, v.MetadataPoolID, v.DataPoolIDs, v.DataPools})
		fmt.Fprintf(&b, "name: %s, metadata pool: %s, data pools: [%s ]\n", v.Name, v.MetadataPool, strings.Join(v.DataPools, " "))
	}
	if len(out) == 0 {
		b.WriteString("No filesystems enabled\n")
	}
	return replyJSON(out, b.String())
}

// queryStat answers "mds stat": the summary line ("status" shows it as
// its mds: line; empty while the map is empty).
func (s *Service) queryStat(moncmd.Command) moncmd.Reply {
	text := ""
	if len(s.m.FS) > 0 || len(s.m.Daemons) > 0 {
		text = s.m.Summary() + "\n"
	}
	return replyJSON(map[string]any{"epoch": s.m.Epoch, "summary": s.m.Summary(), "filesystems": len(s.m.FS),
		"daemons": len(s.m.Daemons), "up": s.upCount(), "standbys": len(s.m.Standbys())}, text)
}

func (s *Service) upCount() int {
	n := 0
	for _, f := range s.m.FS {
		n += len(f.Up)
	}
	return n
}

// queryDump answers "fs dump": the whole map.
func (s *Service) queryDump(moncmd.Command) moncmd.Reply {
	v := s.mapView(nil)
	var b strings.Builder
	fmt.Fprintf(&b, "e%d\n", v.Epoch)
	for _, f := range v.FileSystems {
		b.WriteString(s.fsText(f))
	}
	b.WriteString(standbyText(v.Standbys))
	return replyJSON(v, b.String())
}

// queryGet answers "fs get fs_name".
func (s *Service) queryGet(c moncmd.Command) moncmd.Reply {
	f, r := s.fs(c)
	if r != nil {
		return *r
	}
	v := s.fsView(f)
	return replyJSON(v, s.fsText(v))
}

// queryStatus answers "fs status [fs_name]".
func (s *Service) queryStatus(c moncmd.Command) moncmd.Reply {
	var only *mdsmap.FS
	if c.StrOr("fs_name", "") != "" {
		f, r := s.fs(c)
		if r != nil {
			return *r
		}
		only = f
	}
	v := s.mapView(only)
	var b strings.Builder
	for _, f := range v.FileSystems {
		b.WriteString(s.fsText(f))
	}
	if len(v.FileSystems) == 0 {
		b.WriteString("No filesystems enabled\n")
	}
	b.WriteString(standbyText(v.Standbys))
	return replyJSON(v, b.String())
}

// fsText is a file system as "fs status" prints it: a header line, the
// ranks, the pools.
func (s *Service) fsText(f FSView) string {
	var b strings.Builder
	var flags []string
	for _, fl := range []struct {
		on   bool
		name string
	}{{f.Joinable, "joinable"}, {!f.Joinable, "not joinable"}, {f.AllowStandbyReplay, "allow_standby_replay"}, {f.Down, "down"}} {
		if fl.on {
			flags = append(flags, fl.name)
		}
	}
	fmt.Fprintf(&b, "%s - id %d, max_mds %d, standby_count_wanted %d, %s\n", f.Name, f.ID, f.MaxMDS, f.StandbyCountWanted, strings.Join(flags, ", "))
	rows := [][]string{{"RANK", "STATE", "MDS", "GID", "ADDR", "CLIENTS", "REQS"}}
	count := func(n *int) string {
		if n == nil {
			return "-"
		}
		return fmt.Sprint(*n)
	}
	for _, r := range f.Ranks {
		row := []string{fmt.Sprint(r.Rank), r.State, "", "", "", "", ""}
		if h := r.Holder; h != nil {
			row[2], row[3], row[4], row[5], row[6] = h.Name, fmt.Sprint(h.GID), h.Addr, count(r.Clients), count(r.Requests)
		}
		rows = append(rows, row)
		if fl := r.Follower; fl != nil {
			rows = append(rows, []string{fmt.Sprintf("%d-s", r.Rank), "standby-replay", fl.Name, fmt.Sprint(fl.GID), fl.Addr, "", ""})
		}
	}
	if len(f.Ranks) > 0 {
		b.WriteString(moncmd.Columns(rows, func(int, int) bool { return true }))
	}
	pools := [][]string{{"POOL", "TYPE"}, {f.MetadataPool, "metadata"}}
	for _, p := range f.DataPools {
		pools = append(pools, []string{p, "data"})
	}
	b.WriteString(moncmd.Columns(pools, func(int, int) bool { return true }))
	return b.String()
}

func standbyText(sb []DaemonView) string {
	if len(sb) == 0 {
		return ""
	}
	rows := [][]string{{"STANDBY MDS", "GID", "ADDR"}}
	for _, d := range sb {
		rows = append(rows, []string{d.Name, fmt.Sprint(d.GID), d.Addr})
	}
	return moncmd.Columns(rows, func(int, int) bool { return true })
}
