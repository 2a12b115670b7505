// Package autoscale computes each pool's ideal pg_num from the data it
// holds and the OSDs under its CRUSH root, as Ceph's pg_autoscaler does:
// every root aims at mon_target_pg_per_osd PG copies per OSD, shared
// among its pools by the share of the root's capacity each pool takes
// (its stored bytes, or the size the operator expects it to reach:
// target_size_bytes, target_size_ratio), times the pool's bias, rounded
// to the nearest power of two and never below a floor. A pool whose
// pg_num is more than a factor (3) away from its ideal is one the
// monitors warn about or, in mode on, change (Compute, Status.Adjust,
// Changes). docs/AUTOSCALER.md explains the arithmetic.
//
// It is pure: it reads an OSD map and the usage the PG statistics report
// (Usage) and returns decisions; it knows nothing of the monitors,
// commands, health checks or the clock. internal/mon/autoscalemon runs it
// on the leader, turns its changes into "osd pool set" commands and its
// statuses into health checks and the autoscale-status table. Safe for
// concurrent use (it keeps no state). Start with Compute.
package autoscale
