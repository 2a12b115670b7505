// Package config reads and writes the cluster configuration file
// (cuttle.conf): INI-style sections ("[global]", "[mon.a]", "[osd]")
// of "name = value" lines, where a daemon's own section overrides its
// type's, which overrides [global]. It owns the file format only; what
// the options mean belongs to the daemons (and, for options the monitors
// distribute, to the monitors' config service).
package config
