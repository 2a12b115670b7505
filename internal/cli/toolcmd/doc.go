// Package toolcmd holds the debug tools of the cuttle command tree, as
// Pebble keeps its tool/: "cuttle objectstore" makes (mkfs), checks
// (fsck), inspects (list, dump, get) and benchmarks an OSD's store
// offline, with the OSD stopped, as Ceph's ceph-objectstore-tool and
// ceph-bluestore-tool do.
//
// It opens stores through internal/objectstore/blockstore and must not
// know about a running cluster, the OSD daemon or the monitors.
// internal/cli adds its family to the root command
// ([AddObjectStoreCommands]); results print through internal/cli/cmdutil's
// Output.
//
// # Concurrency
//
// The commands are used by one goroutine at a time, as the tree they
// belong to is; each opens and closes the store it works on, and the
// package keeps no state.
package toolcmd
