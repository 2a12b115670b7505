// Package osdmap is the cluster map of OSDs and pools, and the placement
// of data on it: object -> placement group -> OSDs, bit-compatible with
// Ceph's OSDMap.
//
// It owns the map model (epochs, the cluster's fsid, OSD states with
// their in/out weights, primary affinities and addresses, pools with their
// pg_num and pgp_num, cluster flags, and the placement overrides
// pg_temp, primary_temp, pg_upmap and pg_upmap_items, the blocklist of
// fenced addresses with their expiry), incrementals
// between epochs (Incremental, Diff, Map.Apply), the versioned binary
// encoding of both, and the mapping pipeline:
//
//	object name -> hash (objid)  -> PG (ceph_stable_mod by pg_num)
//	PG -> placement seed (pgp_num, hashed with the pool id)
//	   -> CRUSH (package crush, with the OSD weights as reweight vector)
//	   -> drop nonexistent OSDs -> upmaps -> drop down OSDs = up set
//	   -> primary affinity = up primary
//	   -> pg_temp / primary_temp = acting set and acting primary
//
// RuleLimits (rulelimits.go) says which sets of OSDs a pool's CRUSH rule
// allows (the failure-domain check Ceph runs before accepting an upmap),
// and Map.StaleUpmaps (upmapclean.go) finds the upmaps a change of OSDs or
// hierarchy made invalid, for the monitors to remove.
//
// For the same map Ceph's osdmaptool computes the same sets, primaries and
// summary; the tests replay its output line by line.
//
// The package knows nothing of how maps are agreed on or distributed
// (the monitors), of PG state, peering or objects' data (the OSDs), or of
// messages and transport. It imports crush, objid and encoding.
//
// # Concurrency
//
// A Map is immutable once built (New, Apply, DecodeMap), so any number of
// goroutines may share one; a new epoch is a new Map. Mapping methods take
// a caller-owned Scratch that one goroutine uses at a time, so the hot path
// allocates nothing. An Incremental is a plain value with no locking.
//
// In builds with the invariants tag (make test), PGToUpActing checks every
// mapping it returns (verify.go): existing and up OSDs, primaries inside
// their sets, no two sets sharing scratch memory; a violation panics.
//
// Start reading at Map and Spec (map.go), then Map.PGToUpActing
// (mapping.go) and Incremental (incremental.go).
package osdmap
