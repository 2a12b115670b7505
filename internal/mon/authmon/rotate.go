package authmon

import (
	"time"

	"github.com/cuttlestore/cuttle/internal/auth"
	"github.com/cuttlestore/cuttle/internal/mon/moncmd"
)

// Rotation and bootstrap are driven by the leader's Tick, and go through
// consensus like any command: Tick only asks ("auth rotate", "auth import
// bootstrap=true"); Prepare draws the new keys and the proposal carries
// them; Apply stores them and hands them to the Authority on every
// monitor. A leader that fails between asking and committing leaves
// nothing behind; the next leader asks again.

// askAgainAfter is how long Tick waits before asking again for a command
// whose outcome has not changed the database yet (it may be in flight).
const askAgainAfter = 5 * time.Second

// Tick implements moncmd.Service: on the leader it asks for the
// bootstrap import while the database is not seeded, and for a rotation
// when a service's keys are due (see auth.RotatingKeys.Rotate).
func (s *Service) Tick(now time.Time) []moncmd.Command {
	var out []moncmd.Command
	if !s.db.seeded && s.cfg.Seed != nil && s.ask("import", now) {
		text, err := s.cfg.Seed.Marshal()
		if err != nil { // New checked it; a keyring does not change
			s.log.Error("seed keyring cannot be written", "err", err)
		} else {
			out = append(out, moncmd.New("auth import", "keyring", string(text), "bootstrap", "true"))
		}
	}
	if s.cfg.Authority != nil && len(s.dueRotations(now)) > 0 && s.ask("rotate", now) {
		out = append(out, moncmd.New("auth rotate"))
	}
	return out
}

// ask reports whether Tick should ask for kind now, and records it.
func (s *Service) ask(kind string, now time.Time) bool {
	a, ok := s.asked[kind]
	if ok && a.version == s.db.version && now.Before(a.at.Add(askAgainAfter)) && !now.Before(a.at) {
		return false
	}
	s.asked[kind] = askedAt{version: s.db.version, at: now}
	return true
}

// dueRotations returns, in service order, the services' key sets rotated
// at now, for the services whose sets change: new ones (fresh secrets)
// for services without keys, and the next key or expired keys dropped for
// the others. The applied sets are not changed.
func (s *Service) dueRotations(now time.Time) []*auth.RotatingKeys {
	var out []*auth.RotatingKeys
	for _, svc := range s.cfg.Services {
		r, ok := s.db.rotating[svc]
		if ok {
			r = r.Clone()
		} else {
			r, _ = auth.NewRotatingKeys(svc, s.cfg.RotationPeriod) // New checked svc and the period
		}
		if r.Rotate(now) {
			out = append(out, r)
		}
	}
	return out
}

func (s *Service) prepareRotate(_ moncmd.Command, now time.Time) ([]byte, moncmd.Reply) {
	sets := s.dueRotations(now)
	if len(sets) == 0 {
		return nil, moncmd.Reply{Status: "the service keys are current"}
	}
	p := proposal{base: s.db.version, op: opRotate, rotating: sets}
	return p.encode(), moncmd.Reply{}
}
