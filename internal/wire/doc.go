// Package wire defines the messages Cuttle's daemons and clients
// exchange: each one a struct with a versioned codec (the encoding
// envelope) and a fuzz target, and a message type number the messenger
// carries. It owns the numbering (types.go) and the formats; it does not
// move bytes (internal/msgr does) or act on messages (the daemons do).
// One file per family: moncommand.go and monmsg.go for the monitors,
// osdop.go for client I/O to OSDs, pgmsg.go between the OSDs of a PG,
// fsclientmsg.go (with fsrequest.go and fscaps.go) between a file-system
// client and the MDS, mdsmsg.go for MDS daemons' beacons to the monitors.
//
// Concurrency: the package has no state; a message is a plain value that
// one goroutine encodes, decodes or changes at a time.
package wire
