// Package monc is the monitor client every daemon and client uses: it
// finds a monitor that answers, sends commands and waits for their
// replies, resending elsewhere when a monitor fails, and follows the OSD
// map by subscription, which it keeps alive across monitor failures
// (subscribe.go). It owns its own messenger (a client of the monitors
// only) and knows nothing of what the commands mean.
//
// With cephx, the login to a monitor can bring service tickets (osd,
// mds: auth.MonClientConfig.Services); the client keeps those of the last
// login (Tickets, ServiceTicket) and logs in again before they expire
// (tickets.go), so connections to daemons always find a valid ticket.
//
// It sits beside the messenger, below the daemon cores: the OSD, the
// rados client library and the CLI all import it, and it imports only
// wire, msgr, auth and clock. A Client is safe for concurrent use.
package monc
