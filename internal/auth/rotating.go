package auth

import (
	"fmt"
	"slices"
	"time"
)

// Rotating service keys. Each service type (osd, mds, mgr, mon) has a set
// of secrets the monitors generate and hand to that service's daemons;
// tickets for the service are sealed under one of them. A key is used to
// seal tickets for one Period and accepted for one more, so tickets sealed
// at the end of its turn stay verifiable:
//
//	key n:    |-- seals tickets --|-- still accepted --| expires
//	key n+1:                      |-- seals tickets --|-- still accepted --|
//
// Rotate keeps the next key ready one Period ahead, so daemons hold it
// before the monitors seal with it: after it the set is previous,
// current and next.

// ServiceKey is one rotating secret.
type ServiceKey struct {
	ID      uint64
	Secret  Secret
	Expires time.Time // not accepted from this instant
}

// RotatingKeys is one service's set of rotating keys. It is not safe for
// concurrent use; holders copy it with Clone to share it.
type RotatingKeys struct {
	service string
	period  time.Duration
	nextID  uint64
	keys    []ServiceKey // ascending ID and Expires
}

// NewRotatingKeys returns an empty set for service; call Rotate before
// use. period is how long a key seals tickets, and bounds a ticket's
// lifetime.
func NewRotatingKeys(service string, period time.Duration) (*RotatingKeys, error) {
	if !isCapService(service) {
		return nil, fmt.Errorf("auth: rotating keys: unknown service %q", service)
	}
	if period <= 0 || period > maxPeriod {
		return nil, fmt.Errorf("auth: rotating keys for %s: period %v out of range (0, 366 days]", service, period)
	}
	return &RotatingKeys{service: service, period: period, nextID: 1}, nil
}

// Service is the service the keys are for.
func (r *RotatingKeys) Service() string { return r.service }

// Period is how long each key seals tickets.
func (r *RotatingKeys) Period() time.Duration { return r.period }

// Rotate drops expired keys and adds new ones until a key covers now and
// the next one is ready. It reports whether the set changed, so the
// monitor knows to persist and distribute it.
func (r *RotatingKeys) Rotate(now time.Time) bool {
	n := len(r.keys)
	r.keys = slices.DeleteFunc(r.keys, func(k ServiceKey) bool { return !now.Before(k.Expires) })
	changed := len(r.keys) != n
	if len(r.keys) == 0 {
		r.add(now.Add(2 * r.period)) // seals from now
		changed = true
	}
	// The newest key's turn to seal has begun: make the next one.
	for newest := r.keys[len(r.keys)-1]; !now.Before(newest.Expires.Add(-2 * r.period)); newest = r.keys[len(r.keys)-1] {
		r.add(newest.Expires.Add(r.period))
		changed = true
	}
	return changed
}

func (r *RotatingKeys) add(expires time.Time) {
	r.keys = append(r.keys, ServiceKey{ID: r.nextID, Secret: NewSecret(), Expires: expires})
	r.nextID++
}

// Current returns the key that seals tickets at now: the one whose turn
// [Expires-2*Period, Expires-Period) holds now.
func (r *RotatingKeys) Current(now time.Time) (ServiceKey, bool) {
	for _, k := range r.keys {
		if !now.Before(k.Expires.Add(-2*r.period)) && now.Before(k.Expires.Add(-r.period)) {
			return k, true
		}
	}
	return ServiceKey{}, false
}

// Lookup returns the key with id, expired or not.
func (r *RotatingKeys) Lookup(id uint64) (ServiceKey, bool) {
	for _, k := range r.keys {
		if k.ID == id {
			return k, true
		}
	}
	return ServiceKey{}, false
}

// Keys returns a copy of the keys, oldest first.
func (r *RotatingKeys) Keys() []ServiceKey { return slices.Clone(r.keys) }

// Clone returns an independent copy.
func (r *RotatingKeys) Clone() *RotatingKeys {
	c := *r
	c.keys = slices.Clone(r.keys)
	return &c
}
