// Package autoscalemon is the monitors' PG autoscaler (Ceph's manager
// module pg_autoscaler, run here by the monitors): "osd pool
// autoscale-status", the health checks POOL_TOO_FEW_PGS and
// POOL_TOO_MANY_PGS, and, on the leader, the pg_num changes of pools in
// pg_autoscale_mode on.
//
// Every pg_autoscaler_sleep_interval the leader's Tick runs
// internal/autoscale on the applied OSD map and the PG statistics' usage
// and returns "osd pool set POOL pg_num N" for each pool in mode on
// whose pg_num is more than pg_autoscaler_threshold away from its ideal;
// once the OSD-map service has applied it, Tick raises the pool's
// pgp_num target to the new pg_num, and the OSD-map service's stepping
// moves the split PGs to their own placement. Shrinking needs PG
// merging: until the OSDs can merge (Config.CanShrink), a pool in mode on
// with too many PGs is warned about instead.
//
// It has no replicated state of its own: the pools' settings are in the
// OSD map (osdmon's "osd pool set"), the usage in the PG statistics
// (pgmon), read through Config. Concurrency: the driver calls it from one
// goroutine (moncmd.Service's contract). Start with service.go.
package autoscalemon
