// Package rados is Cuttle's client library: what applications and the
// command-line tool link to reach a cluster. This first part is the
// monitor client (monclient.go): it finds a monitor that answers,
// sends commands and waits for their replies, resending elsewhere when a
// monitor fails, and follows the OSD map by subscription. Object I/O
// (placement with CRUSH, ops to OSDs) builds on it.
//
// It imports only packages below the daemon cores (wire, msgr, auth,
// osdmap); it never imports a daemon.
package rados
