// Package config owns the daemons' options: their one schema, the
// cluster configuration file, and how a daemon resolves its values from
// the sources that may set them.
//
//   - schema.go declares every daemon option once: name, type, default,
//     bounds, whether a running daemon applies a change, which daemons
//     read it, the run command's flag that overrides it, and a one-line
//     description. The monitors' config service (internal/mon/configmon)
//     checks "config set" against it; docs/CONFIG.md's option table is
//     generated from it (docs.go).
//   - parse.go checks a value against its option and gives its canonical
//     form.
//   - file.go reads and writes the configuration file (cuttle.conf):
//     INI-style sections ("[global]", "[mon.a]", "[osd]") of
//     "name = value" lines, where a daemon's own section overrides its
//     type's, which overrides [global].
//   - values.go resolves a daemon's options from its sources, in
//     increasing precedence: the schema's default, the central config
//     (the monitors' database, as it applies to the daemon), the local
//     file, then a command-line flag. Values is the result: each option's
//     value and the source it came from.
//   - watch.go is the Watcher, which keeps a running daemon's Values
//     current as the central config changes.
//
// It knows nothing of the monitors, the network or what an option means
// to the daemon that reads it: a daemon fetches the central config with
// its own monitor client and applies the Values it is handed.
//
// Concurrency: Option, File (once parsed) and Values are values that may
// be shared for reading; a File being Set is not safe for concurrent
// use. A Watcher runs on the goroutine that calls Run.
package config
