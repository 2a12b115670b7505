// Package osd is the OSD daemon's driver: it boots to the monitors,
// follows the OSD map, keeps a registry of the placement groups CRUSH
// gives it, and serves them — as primary, client ops with primary-copy
// replication (the Ceph paper's section 5.2: the primary assigns the
// version, sends the transaction to the replicas, and replies *applied*
// once every replica applied it and *committed* once every replica made
// it durable); as replica, the primary's transactions in the order it
// sent them.
//
// The pieces it wires: ops (executing a request's op vector into one
// transaction), pglog (the PG log and info, persisted in that same
// transaction), the object store, the messenger and the monitor client.
//
// Ordering and safety rules:
//   - Requests to one object run one at a time, in arrival order; the
//     next starts once the previous write is applied locally, so it sees
//     it. Different objects proceed concurrently.
//   - An op whose map epoch is newer than the OSD's waits for that map; an
//     op to an OSD that is not the PG's acting primary, or from before the
//     PG's current interval, is answered -ESTALE with the OSD's epoch, and
//     so is every unfinished write when the interval changes: the client
//     resends after refreshing its map, and the PG log's request ids make
//     a resent write apply once.
//   - A PG with fewer than min_size OSDs acting refuses writes: requests
//     wait until a map gives it enough.
//
// Peering, recovery, heartbeats and scrub come with the self-healing
// work; until then a PG trusts that its acting set's copies agree, which
// holds for a cluster whose OSDs stay up.
//
// Concurrency: OSD methods are safe for concurrent use. Each PG has one
// mutex; the OSD's own mutex is never taken while holding a PG's.
package osd
