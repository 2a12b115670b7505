// Package balancer evens out how many PGs each OSD holds by computing
// pg_upmap_items, as Ceph's upmap balancer does (the mgr balancer module
// with OSDMap::calc_pg_upmaps): for every pool, each OSD that is in gets
// a target share of the pool's PG copies in proportion to its CRUSH
// weight (times its reweight), and the balancer moves single copies from
// the OSDs furthest above their target to those furthest below, until
// every OSD is within Options.MaxDeviation of its target or no move
// helps. A move never puts two copies of a PG into one failure domain of
// the pool's rule (osdmap.RuleLimits), never targets an OSD that is down
// or out, and one call makes at most Options.MaxMoves of them, so the
// data a round sets moving is bounded.
//
// It also scores a map (Eval, as Ceph's "balancer eval"): per pool the
// PG copies per OSD (minimum, maximum, standard deviation, the largest
// deviation from target) and a score, 0 for a perfect spread, growing
// towards 1 with the share of weight that is overfull and by how much.
//
// The package is pure: a map in, a plan out, deterministic (the same map
// and options always give the same plan; no randomness, clock or I/O).
// The monitors' balancer service (internal/mon/balancermon) runs it on
// the applied map and proposes the plan; `cuttle osdmap balance` runs it
// on a map file. It knows nothing of how plans are agreed on or
// executed. Start reading at Optimize (optimize.go), then Eval (eval.go).
package balancer
