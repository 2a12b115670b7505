// Package mdsmap is the MDS map: the cluster's file systems and the
// metadata-server daemons that serve them, as Ceph's FSMap describes them.
// The monitors keep it (internal/mon/mdsmon), MDS daemons (internal/mds)
// learn their rank from it, and file-system clients (fsclient) find the
// rank that owns a subtree in it.
//
// A Map has an epoch (every change is a new one), the file systems
// (FS: id, name, metadata pool, data pools, max_mds,
// standby_count_wanted, flags, session timeouts, and the ranks: which
// are in, which daemon holds each, which are damaged) and the daemons
// (Daemon: gid, name, address, state, and the file system and rank it
// holds or follows). A rank that is in but held by no daemon is failed.
// Daemons without a rank are standbys. Several ranks per file system
// (max_mds > 1, part II's subtree partitioning) are representable; the
// monitors grow and shrink the set of ranks one at a time.
//
// It owns the model, its invariants (Check), its versioned encoding
// (MarshalBinary, Unmarshal) and its text summary (Summary). It knows
// nothing of beacons, grace periods or how standbys are chosen (the
// monitors' internal/mon/mdsmon/failover decides that), of pools beyond
// their ids, or of transport. It imports encoding only.
//
// Concurrency: a Map is immutable once built and shared by any number of
// goroutines; a change is made on a Clone, which the changer owns until
// it publishes it.
package mdsmap
