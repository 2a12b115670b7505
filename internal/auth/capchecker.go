package auth

import (
	"fmt"
	"slices"
)

// CapChecker authorizes requests against all of an entity's Caps. It is
// immutable once built and safe for concurrent use; daemons build one per
// session from ServerHandshake.Caps.
type CapChecker struct {
	peer   EntityName
	grants map[string]Grants
	events Events
}

// NewCapChecker parses every service's caps of peer. A service missing
// from caps grants nothing. ev counts Check's refusals.
func NewCapChecker(peer EntityName, caps Caps, ev Events) (*CapChecker, error) {
	c := &CapChecker{peer: peer, grants: make(map[string]Grants, len(caps)), events: ev}
	services := make([]string, 0, len(caps))
	for s := range caps {
		services = append(services, s)
	}
	slices.Sort(services) // the first error is deterministic
	for _, s := range services {
		g, err := ParseCaps(s, caps[s])
		if err != nil {
			return nil, fmt.Errorf("auth: caps of %s: %w", peer, err)
		}
		c.grants[s] = g
	}
	return c, nil
}

// Allows reports whether the caps allow req.
func (c *CapChecker) Allows(req Request) bool {
	return c.grants[req.Service].Allows(req)
}

// Check returns nil if the caps allow req, else a Refusal with
// ReasonForbidden, counted through the Events.
func (c *CapChecker) Check(req Request) error {
	if c.Allows(req) {
		return nil
	}
	return c.events.refused(&Refusal{Reason: ReasonForbidden, Peer: c.peer,
		Detail: fmt.Sprintf("caps %q do not allow %s", c.grants[req.Service].String(), req)})
}
