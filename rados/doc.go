// Package rados is Cuttle's client library: what applications and the
// command-line tool link to reach a cluster. It talks to the monitors
// through internal/monc and (as it grows) computes placement with CRUSH
// and sends object ops to OSDs.
//
// It imports only packages below the daemon cores (wire, msgr, monc,
// auth, osdmap); it never imports a daemon.
package rados
