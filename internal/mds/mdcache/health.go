package mdcache

import (
	"time"

	"github.com/cuttlestore/cuttle/internal/mds/locker"
)

// LateReleases returns the clients whose oldest unacknowledged cap
// revocation is older than half RevokeTimeout at now, oldest first
// (locker.LateReleases): the MDS_CLIENT_LATE_RELEASE health check.
func (c *Cache) LateReleases(now time.Time) []locker.LateRelease {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lk.LateReleases(now)
}
