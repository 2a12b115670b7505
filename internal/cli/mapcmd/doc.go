// Package mapcmd holds the offline map tools of the cuttle command tree:
// "cuttle crush" (compile, decompile, build, tree and test CRUSH maps, as
// Ceph's crushtool does) and "cuttle osdmap" (create, print, change OSD
// maps and compute placements, as osdmaptool does). They read and write
// map files only.
//
// It must not know about a running cluster, the monitors or the client
// library: nothing here dials anything. internal/cli adds its families to
// the root command ([AddCrushCommands], [AddOSDMapCommands]); results
// print through internal/cli/cmdutil's Output.
//
// # Concurrency
//
// The commands are used by one goroutine at a time, as the tree they
// belong to is; the package keeps no state.
package mapcmd
