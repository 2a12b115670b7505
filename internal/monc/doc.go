// Package monc is the monitor client every daemon and client uses: it
// finds a monitor that answers, sends commands and waits for their
// replies, resending elsewhere when a monitor fails, and follows the OSD
// map by subscription. It owns its own messenger (a client of the
// monitors only) and knows nothing of what the commands mean.
//
// It sits beside the messenger, below the daemon cores: the OSD, the
// rados client library and the CLI all import it, and it imports only
// wire, msgr, auth and clock. A Client is safe for concurrent use.
package monc
