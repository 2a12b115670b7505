package mdsmon

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cuttlestore/cuttle/encoding"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
	"github.com/cuttlestore/cuttle/internal/mon/monstore"
)

// Fences: a failed rank holder must be blocklisted in the OSD map before
// anyone can trust that it no longer writes. The failover that fails it
// names its address and nonce (failover.FenceAddr); every monitor adds
// them to its list of fences as it applies the change and keeps the list
// in its store (key "fences"), so the list is replicated like the map.
// The leader's Tick sends "osd blocklist add" for each fence the OSD map
// does not yet carry (again after fenceResend, in case the command was
// lost with a leadership) and proposes "mds fenced" for those it does,
// which removes them from every monitor's list. A leader that takes over
// between the failover and the blocklist finds the fence in its own list
// and sends it: no fence is lost on a leader change.

// maxFences bounds the fences kept; beyond it the oldest are dropped
// (with a warning: more than a thousand daemons failed and not yet
// blocklisted means the OSD-map service is not taking commands).
const maxFences = 1024

// fenceResend is how long the leader waits for a blocklist entry it asked
// for before asking again.
const fenceResend = 5 * time.Second

// fenceCommands is the leader's part of Tick: blocklist what is pending,
// retire what the OSD map carries.
func (s *Service) fenceCommands(now time.Time) []moncmd.Command {
	if len(s.fences) == 0 {
		s.sent = nil
		return nil
	}
	var bl map[string]time.Time
	if om := s.cfg.OSDMap(); om != nil {
		bl = om.Blocklist()
	}
	if s.sent == nil {
		s.sent = map[string]time.Time{}
	}
	var cmds []moncmd.Command
	var done []string
	for _, a := range s.fences {
		if _, ok := bl[a]; ok {
			done = append(done, a)
			delete(s.sent, a)
			continue
		}
		if t, ok := s.sent[a]; ok && now.Sub(t) < fenceResend {
			continue
		}
		s.sent[a] = now
		cmds = append(cmds, moncmd.New("osd blocklist add", "addr", a, "expire", strconv.Itoa(int(FenceExpire/time.Second))))
	}
	if len(done) > 0 {
		cmds = append(cmds, moncmd.New("mds fenced", "addrs", strings.Join(done, ",")))
	}
	return cmds
}

// prepareFenced handles "mds fenced addrs": the fences the OSD map now
// carries leave the list.
func (s *Service) prepareFenced(c moncmd.Command, _ time.Time) ([]byte, moncmd.Reply) {
	arg, err := c.Str("addrs")
	if err != nil {
		return nil, moncmd.Errorf(moncmd.EINVAL, "mds fenced: %v", err)
	}
	var done []string
	for a := range strings.SplitSeq(arg, ",") {
		if slices.Contains(s.fences, a) && !slices.Contains(done, a) {
			done = append(done, a)
		}
	}
	if len(done) == 0 {
		return nil, moncmd.Reply{Status: "no such fences pending"}
	}
	status := fmt.Sprintf("fenced %s", strings.Join(done, ", "))
	return proposal{base: s.m.Epoch, status: status, fenced: done}.encode(), moncmd.Reply{Status: status}
}

// applyFenced applies a proposal without a map: it retires fences.
func (s *Service) applyFenced(b *monstore.Batch, p proposal) (moncmd.Reply, error) {
	next := slices.DeleteFunc(slices.Clone(s.fences), func(a string) bool { return slices.Contains(p.fenced, a) })
	if err := s.storeFences(b, next); err != nil {
		return moncmd.Reply{}, err
	}
	return moncmd.Reply{Status: p.status}, nil
}

// addFences appends newly failed daemons' addresses to the list.
func (s *Service) addFences(b *monstore.Batch, addrs []string) error {
	next := slices.Clone(s.fences)
	for _, a := range addrs {
		if !slices.Contains(next, a) {
			next = append(next, a)
		}
	}
	if n := len(next); n > maxFences {
		s.log.Warn("too many MDS fences pending; dropping the oldest", "dropped", next[:n-maxFences])
		next = next[n-maxFences:]
	}
	return s.storeFences(b, next)
}

// storeFences writes the list and adopts it.
func (s *Service) storeFences(b *monstore.Batch, fences []string) error {
	if err := b.Put(ServiceName, []byte(keyFences), encodeFences(fences)); err != nil {
		return fmt.Errorf("mdsmon: storing fences: %w", err)
	}
	s.fences = fences
	return nil
}

// encodeFences encodes the list: envelope v1 (compat 1) { count uvarint,
// string each }.
func encodeFences(fences []string) []byte {
	var e encoding.Encoder
	mk := e.Begin(1, 1)
	e.Uvarint(uint64(len(fences)))
	for _, a := range fences {
		e.String(a)
	}
	e.End(mk)
	return e.Data()
}

func decodeFences(b []byte) ([]string, error) {
	d := encoding.NewDecoder(b)
	d.Begin(1)
	n := d.Count(1)
	if n > maxFences {
		d.Fail(fmt.Errorf("%w: %d fences", encoding.ErrCorrupt, n))
	}
	var out []string
	for i := 0; i < n && d.Err() == nil; i++ {
		out = append(out, d.String(maxText))
	}
	d.End()
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("mdsmon: fences: %w", err)
	}
	return out, nil
}
