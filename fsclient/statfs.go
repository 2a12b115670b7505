package fsclient

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
)

// Statfs is the file system's capacity, as statfs(2) reports it, in
// blocks of Bsize bytes.
type Statfs struct {
	Bsize  uint32
	Blocks uint64 // the data pools' stored bytes plus what they may still take
	Bfree  uint64 // what the data pools may still take (replicas counted)
	Bavail uint64
	Files  uint64 // objects in the data pools
	Ffree  uint64
}

// statfsBlock is Statfs's block size (Ceph reports 4 MiB blocks for
// the same reason: counts of large file systems fit).
const statfsBlock = 4 << 20

// dfReply is the part of the monitors' "df" JSON the client reads.
type dfReply struct {
	Pools []struct {
		ID    int64 `json:"id"`
		Stats struct {
			Stored   int64  `json:"stored"`
			Objects  int64  `json:"objects"`
			MaxAvail uint64 `json:"max_avail"`
		} `json:"stats"`
	} `json:"pools"`
}

// Statfs returns the capacity of the file system's data pools, from
// the monitors' df.
func (c *Client) Statfs(ctx context.Context) (*Statfs, error) {
	r, err := c.conn.MonCommand(ctx, "df", nil)
	if err != nil {
		return nil, fmt.Errorf("fsclient: statfs: %w", err)
	}
	var df dfReply
	if err := json.Unmarshal(r.Data, &df); err != nil {
		return nil, fmt.Errorf("fsclient: statfs: the monitors' df reply: %v: %w", err, syscall.EIO)
	}
	c.mu.Lock()
	pools := c.info.DataPools
	c.mu.Unlock()
	var used, avail, objects uint64
	for _, p := range df.Pools {
		if !slices.Contains(pools, p.ID) {
			continue
		}
		used += uint64(max(p.Stats.Stored, 0))
		avail += p.Stats.MaxAvail
		objects += uint64(max(p.Stats.Objects, 0))
	}
	free := avail / statfsBlock
	return &Statfs{Bsize: statfsBlock, Blocks: (used+statfsBlock-1)/statfsBlock + free, Bfree: free, Bavail: free,
		Files: objects, Ffree: free}, nil
}
