package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/cuttlestore/cuttle/rados"
)

// cluster is what the server asks of the cluster besides the engine's
// I/O: blocklist an address and wait until the OSD map that holds the
// entry is the daemon's (so the OSDs it talks to refuse the fenced
// party), and the metadata pool. radosCluster is the real one.
type cluster interface {
	// Fence blocklists addr for expire and returns once the daemon's OSD
	// map holds the entry.
	Fence(ctx context.Context, addr string, expire time.Duration) error
	// Meta opens the metadata pool pool.
	Meta(pool int64) (*rados.IOContext, error)
	// Full returns the first of pools that the daemon's OSD map marks
	// full, if any.
	Full(pools []int64) (int64, bool)
}

// radosCluster reaches the cluster through the daemon's rados connection.
type radosCluster struct{ conn *rados.Conn }

// Fence sends "osd blocklist add" (which adds or renews: the monitors
// may have sent the same entry when they failed a rank holder), asks
// for the OSD map's epoch after it and waits for that map.
func (c radosCluster) Fence(ctx context.Context, addr string, expire time.Duration) error {
	secs := max(int(expire/time.Second), 1)
	if _, err := c.conn.MonCommand(ctx, "osd blocklist add", map[string]string{"addr": addr, "expire": strconv.Itoa(secs)}); err != nil {
		return fmt.Errorf("mds: fence %s: %w", addr, err)
	}
	r, err := c.conn.MonCommand(ctx, "osd stat", nil)
	if err != nil {
		return fmt.Errorf("mds: fence %s: osd stat: %w", addr, err)
	}
	var st struct {
		Epoch uint64 `json:"epoch"`
	}
	if err := json.Unmarshal(r.Data, &st); err != nil || st.Epoch == 0 {
		return fmt.Errorf("mds: fence %s: osd stat's reply holds no epoch: %q", addr, r.Data)
	}
	if err := c.conn.WaitForEpoch(ctx, st.Epoch); err != nil {
		return fmt.Errorf("mds: fence %s: wait for OSD map %d: %w", addr, st.Epoch, err)
	}
	return nil
}

func (c radosCluster) Meta(pool int64) (*rados.IOContext, error) {
	name, err := c.conn.PoolName(pool)
	if err != nil {
		return nil, fmt.Errorf("mds: metadata pool %d: %w", pool, err)
	}
	return c.conn.OpenIOContext(name)
}

func (c radosCluster) Full(pools []int64) (int64, bool) {
	for _, p := range pools {
		if c.conn.PoolFull(p) {
			return p, true
		}
	}
	return 0, false
}
