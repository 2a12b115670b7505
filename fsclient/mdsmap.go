package fsclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cuttlestore/cuttle/fsclient/internal/session"
	"github.com/cuttlestore/cuttle/rados"
)

// fsInfo is what the client needs of its file system's entry in the MDS
// map, read from the monitors' "fs get" reply (its JSON shape, as any
// client reads it).
type fsInfo struct {
	ID             int32
	DataPools      []int64
	SessionTimeout time.Duration
	Rank0          session.Holder
}

type fsGetReply struct {
	ID             int32   `json:"id"`
	DataPoolIDs    []int64 `json:"data_pool_ids"`
	SessionTimeout int     `json:"session_timeout"`
	Ranks          []struct {
		Rank   int32 `json:"rank"`
		Holder *struct {
			GID   uint64 `json:"gid"`
			Name  string `json:"name"`
			Addr  string `json:"addr"`
			State string `json:"state"`
		} `json:"mds"`
	} `json:"ranks"`
}

// holderStates maps the MDS map's state names to what the session
// needs.
var holderStates = map[string]session.HolderState{
	"up:replay":       session.HolderReplay,
	"up:resolve":      session.HolderReplay,
	"up:reconnect":    session.HolderReconnect,
	"up:rejoin":       session.HolderRejoin,
	"up:clientreplay": session.HolderRejoin,
	"up:active":       session.HolderActive,
	"up:stopping":     session.HolderStopping,
}

// readFS asks the monitors for file system name's entry.
func readFS(ctx context.Context, conn *rados.Conn, name string) (fsInfo, error) {
	r, err := conn.MonCommand(ctx, "fs get", map[string]string{"fs_name": name})
	if err != nil {
		return fsInfo{}, fmt.Errorf("fsclient: file system %q: %w", name, err)
	}
	var v fsGetReply
	if err := json.Unmarshal(r.Data, &v); err != nil {
		return fsInfo{}, fmt.Errorf("fsclient: file system %q: the monitors' fs get reply: %w", name, err)
	}
	info := fsInfo{ID: v.ID, DataPools: v.DataPoolIDs, SessionTimeout: time.Duration(v.SessionTimeout) * time.Second}
	for _, r := range v.Ranks {
		if r.Rank != 0 || r.Holder == nil {
			continue
		}
		info.Rank0 = session.Holder{GID: r.Holder.GID, Name: r.Holder.Name, Addr: r.Holder.Addr,
			State: holderStates[r.Holder.State]}
	}
	return info, nil
}
