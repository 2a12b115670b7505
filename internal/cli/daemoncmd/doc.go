// Package daemoncmd holds the commands that create and run cuttle's
// daemons: "mon mkfs" and "mon run" ([MonMkfsCommand], [MonRunCommand],
// mon.go), "osd mkfs" and "osd run" ([OSDMkfsCommand], [OSDRunCommand];
// osdmkfs.go, osdrun.go, and osdoptions.go, which makes osd run's option
// flags from the configuration schema), and "cluster up", "cluster down"
// and "cluster status" ([AddClusterCommands], clusterup.go), a local
// cluster of cuttle processes. Start reading at clusterup.go: cluster up
// creates each daemon as its mkfs command would and starts it as
// "cuttle mon run" or "cuttle osd run".
//
// It owns turning flags and the configuration file into internal/daemon's
// config structs (mkfs and run go through internal/daemon, never a
// daemon core: archtest enforces it), wiring internal/launcher to this
// binary and to the daemons' mkfs, and naming the launcher's errors
// (launcherError). It does not know how the tree is assembled: the root
// registers the cluster flags and places the mkfs and run commands in
// internal/cli/admincmd's mon and osd groups. It imports
// internal/cli/clusterconn (to reach the monitors) and
// internal/cli/cmdutil, never the root or another command family.
//
// # Concurrency
//
// The commands belong to one tree and run one at a time, as the tree
// does. mon run and osd run block until their context ends, running the
// daemon's goroutines under it; cluster up, down and status return once
// the launcher has started, stopped or listed the daemons, which run on
// in processes of their own. cluster up's health probe keeps the last
// health summary it saw for the one goroutine that waits for the cluster.
package daemoncmd
