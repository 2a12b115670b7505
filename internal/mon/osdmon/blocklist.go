package osdmon

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// The blocklist (osdmap's blocklist.go): addresses the OSDs must no
// longer serve, each until an expiry. "osd blocklist add" adds or renews
// an entry (the MDS-map service sends it for every MDS it fails), "osd
// blocklist rm" removes one, "osd blocklist ls" lists them. Expired
// entries block nothing and are dropped by the next add or rm.

// DefaultBlocklistExpire is how long an entry lasts without an expire
// argument (Ceph's mon_osd_blocklist_default_expire: an hour).
const DefaultBlocklistExpire = time.Hour

// maxBlocklistExpire bounds an entry's life (a year).
const maxBlocklistExpire = 365 * 24 * time.Hour

// blocklistChange is the JSON reply of add and rm: the entry, and the
// epoch of the map that carries the change (a client waits for it to be
// sure every OSD that has it enforces the change).
type blocklistChange struct {
	Addr          string  `json:"addr"`
	Until         string  `json:"until,omitempty"`
	ExpireSeconds float64 `json:"expire_seconds,omitempty"`
	Removed       bool    `json:"removed,omitempty"`
	Epoch         uint64  `json:"epoch"`
}

// prepareBlocklistAdd handles "osd blocklist add addr [expire]" (expire
// in seconds).
func (s *Service) prepareBlocklistAdd(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	addr, err := c.Str("addr")
	if err != nil {
		return bad(err)
	}
	expire := DefaultBlocklistExpire
	if c.Has("expire") {
		secs, err := c.Float("expire")
		if err != nil {
			return bad(err)
		}
		if !(secs > 0) || secs > maxBlocklistExpire.Seconds() {
			return nil, moncmd.Errorf(moncmd.EINVAL, "osd blocklist add: expire %v: want seconds above 0, at most a year", secs)
		}
		expire = time.Duration(secs * float64(time.Second))
	}
	if addr == "" || len(addr) > 256 || strings.ContainsAny(addr, " \t\n,") {
		return nil, moncmd.Errorf(moncmd.EINVAL, "osd blocklist add: address %q: want HOST or HOST:PORT", addr)
	}
	t := s.begin(now)
	s.dropExpired(t, now)
	until := now.Add(expire)
	t.inc.NewBlocklist = map[string]time.Time{addr: until}
	status := fmt.Sprintf("blocklisting %s until %s (%d sec)", addr, until.UTC().Format(time.RFC3339), int(expire.Seconds()))
	r := replyJSON(blocklistChange{Addr: addr, Until: until.UTC().Format(time.RFC3339Nano), ExpireSeconds: expire.Seconds(),
		Epoch: uint64(t.base.Epoch()) + 1}, status+"\n")
	r.Status = status
	return t.propose(r)
}

// prepareBlocklistRm handles "osd blocklist rm addr".
func (s *Service) prepareBlocklistRm(c moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	addr, err := c.Str("addr")
	if err != nil {
		return bad(err)
	}
	if _, ok := s.m.Blocklist()[addr]; !ok {
		status := fmt.Sprintf("%s isn't blocklisted", addr)
		r := replyJSON(blocklistChange{Addr: addr, Epoch: uint64(s.m.Epoch())}, status+"\n")
		r.Status = status
		return nil, r
	}
	t := s.begin(now)
	s.dropExpired(t, now)
	if !slices.Contains(t.inc.OldBlocklist, addr) {
		t.inc.OldBlocklist = append(t.inc.OldBlocklist, addr)
	}
	status := fmt.Sprintf("un-blocklisting %s", addr)
	r := replyJSON(blocklistChange{Addr: addr, Removed: true, Epoch: uint64(t.base.Epoch()) + 1}, status+"\n")
	r.Status = status
	return t.propose(r)
}

// dropExpired removes the entries expired at now.
func (s *Service) dropExpired(t *txn, now time.Time) {
	for _, a := range s.m.BlocklistAddrs() {
		if !now.Before(s.m.Blocklist()[a]) {
			t.inc.OldBlocklist = append(t.inc.OldBlocklist, a)
		}
	}
}

// queryBlocklistLs handles "osd blocklist ls": the entries, with their
// expiry.
func (s *Service) queryBlocklistLs(moncmd.Command) moncmd.Reply {
	type entry struct {
		Addr  string `json:"addr"`
		Until string `json:"until"`
	}
	out := []entry{}
	var b strings.Builder
	bl := s.m.Blocklist()
	for _, a := range s.m.BlocklistAddrs() {
		u := bl[a].UTC().Format(time.RFC3339)
		out = append(out, entry{a, u})
		fmt.Fprintf(&b, "%s %s\n", a, u)
	}
	fmt.Fprintf(&b, "listed %d entries\n", len(out))
	return replyJSON(out, b.String())
}
