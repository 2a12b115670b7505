package mdcache

import "github.com/cuttlestore/cuttle/internal/mds/mdstore"

// Damage returns the damaged metadata objects the engine has found (a
// fragment that does not decode, or is missing though its directory
// names it), one an object, and how many there were. Requests touching
// them get EIO; everything else goes on. The daemon shows them as
// "metadata damage detected" (docs/MDS.md, "Damage and scrub").
func (c *Cache) Damage() ([]mdstore.DamageError, int) { return c.store.Damage() }
