package locker

import (
	"cmp"
	"slices"
	"time"
)

// LateRelease is a client slow to give back caps: the oldest of its
// revocations not yet acknowledged, on inode Ino, sent at Since.
type LateRelease struct {
	Client   ClientID
	Ino      Ino
	Revoking Caps
	Since    time.Time
}

// LateAfter is how long a revocation may stay unacknowledged before
// LateReleases names its client: half the eviction timeout when there is
// one (so the warning comes while the client can still answer), the
// warning timeout otherwise.
func (c Config) LateAfter() time.Duration {
	c = c.withDefaults()
	if c.RevokeEvict > 0 {
		return c.RevokeEvict / 2
	}
	return c.RevokeWarn
}

// LateReleases returns, one per client, the clients whose oldest
// unacknowledged revocation is at least Config.LateAfter old at now:
// Ceph's MDS_CLIENT_LATE_RELEASE. They come oldest first (then by
// client). A client whose session ended and waits to be fenced is not
// named: it can no longer answer.
func (l *Locker) LateReleases(now time.Time) []LateRelease {
	after := l.cfg.LateAfter()
	oldest := map[ClientID]LateRelease{}
	for ino := range l.revoking {
		in := l.inodes[ino]
		if in == nil {
			continue
		}
		for c, cp := range in.caps {
			since, ok := cp.RevokeSince()
			if !ok || cp.fencing || now.Sub(since) < after {
				continue
			}
			if o, seen := oldest[c]; !seen || since.Before(o.Since) || (since.Equal(o.Since) && ino < o.Ino) {
				oldest[c] = LateRelease{Client: c, Ino: ino, Revoking: cp.Revoking(), Since: since}
			}
		}
	}
	out := make([]LateRelease, 0, len(oldest))
	for _, lr := range oldest {
		out = append(out, lr)
	}
	slices.SortFunc(out, func(a, b LateRelease) int {
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.Client, b.Client))
	})
	return out
}
