// Package proto is the NBD protocol's wire format (the NetworkBlockDevice
// project's doc/proto.md): the constants, and pure functions that decode
// what a client sends (its flags, option headers and payloads, request
// headers) and encode what a server answers (option replies, simple and
// structured replies). It does no I/O: the server in the parent package
// reads bytes from a connection, hands them here, and writes back what
// comes out.
//
// Every decoder takes a byte slice of a stated length and returns an
// error (never panics) for bytes that break the protocol; each has a
// fuzz test. Start with ParseOption and ParseRequest.
package proto
