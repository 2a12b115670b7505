// Package daemon assembles Cuttle's daemons from config structs: an OSD
// (OSDConfig, StartOSD, RunOSD), an MDS (MDSConfig, RunMDS: mds.go, over
// internal/mds/server, with the engine passed in as an Opener: the CLI
// passes internal/mds/cacheengine's, which this package must not import,
// as the simulator imports this package and the engine's tests the
// simulator) and a
// monitor (MonConfig, NewMon, RunMon),
// and the data directories they run from (MkfsOSD, ReadOSDDir, MkfsMon,
// ReadMonDir). Assembly is everything between a daemon's options and its
// core: opening and closing the store, the process's memory tuning, cephx
// (the OSD's login and its rotating keys, kept fresh in osdauth.go; the
// monitors' key server and caps checks), the OSD's options (resolved from
// the schema's defaults, the configuration file, flags and overrides, then
// kept current with the central config by a config.Watcher polling through
// the OSD's monitor session: osdoptions.go), the Prometheus registry and
// its HTTP server, and the order in which all of it starts and stops.
//
// The CLI (`cuttle osd run`, `cuttle mon run`, the mkfs commands) turns
// flags and the configuration file into these structs; the simulator
// (internal/sim) fills the same structs with its in-memory network and
// stores. So both run the same list of monitor services (monServices) and
// the same OSD start, cephx and the central config included. The CLI imports the daemon cores
// (internal/osd, internal/mon and its services) only through this
// package; internal/archtest enforces it.
//
// It must not know about flags, the configuration file's format, signals
// or output: it takes the parsed file (config.File) and the flags' values
// by option name, and cancelling the context is how a daemon is told to
// stop (RunOSD then asks the monitors to mark the OSD down first, as
// SIGTERM does). Nor does it hold policy of the cores: the options'
// defaults are the schema's (internal/config), what they mean is the
// OSD's (osd.OptionsFrom, osd.SetConfig), and the other settings are
// copied into osd.Config and mon.Config field by field.
//
// One package for both daemons, not one each: they share the cephx
// wiring (authEvents), the data-directory conventions (KeyringFile) and
// the metrics server, and each is a few hundred lines. A daemon that
// grows past that (an MDS, an S3 gateway with its own assembly) gets a
// file here first and a sub-package when it needs one.
//
// Concurrency: StartOSD, NewMon and the mkfs functions are called from one
// goroutine. A running OSD's methods may be called from any goroutine,
// but Close only once; RunOSD and Mon.Run block until the daemon stops.
// A running OSD's config Watcher runs on a goroutine of its own, which
// Close stops, and waits for, before it closes the OSD; the option maps
// OSDConfig carries are copied at start.
// Nothing here holds package-level mutable state; tuneGC changes the
// process's garbage-collector settings, which is why the simulator never
// sets a memory target.
//
// Start reading at osd.go (StartOSD, RunOSD), osdoptions.go and mon.go
// (NewMon).
package daemon
